/**
 * The webhook commands of the command table (commands.ts): the receiver, the inbox's status, and
 * the worker that applies what was received.
 */
import { MetricsOptions, type CommandSpec } from "./command-spec.js";

export const WEBHOOK_COMMANDS: readonly CommandSpec[] = [
  {
    name: "webhooks serve",
    summary: "receive the service's webhooks: verify each, store it durably in the inbox, then answer 2xx",
    description:
      "Listen for the service's deliveries on POST webhooks.path (default http://127.0.0.1:8787/webhooks) and GET /healthz. " +
      "Each delivery's X-Service-Signature is checked against BENEFITS_WEBHOOK_SECRET (several, comma-separated, during a " +
      "rotation) and its Auth against webhooks.auth; the event is committed to the inbox beside the snapshot before the 2xx " +
      "(a repeated event id is answered 2xx and stored once). 401 for a bad signature or Auth, 413 for a body over 64 KiB, 400 " +
      "for a body that is not an event, 503 when the inbox cannot be written (the sender retries). Refuses to start without " +
      "a secret unless --insecure-no-signature, and without the service it refetches members from (BENEFITS_BASE_URL and " +
      "BENEFITS_API_KEY): it always applies what it receives. Logs JSON lines on stdout; with schedule.textfile, writes its counters to " +
      "the file beside it (NAME-webhooks.prom); with --metrics-port, serves them and its latencies at GET /metrics on a listener of " +
      "its own (docs/metrics.md). Serves until SIGINT or SIGTERM: the requests in hand are answered, then exit 130 or 143.",
    options: [
      { flags: "--port <n>", description: "port to listen on (default webhooks.port, 8787; 0: any free port)", parse: "nonNegativeInt" },
      { flags: "--host <host>", description: "address to listen on (default webhooks.host, 127.0.0.1)" },
      { flags: "--insecure-no-signature", description: "accept deliveries without a signature when no secret is configured" },
      ...MetricsOptions,
    ],
    load: () => import("./commands/webhooks-serve.js"),
  },
  {
    name: "webhooks status",
    summary: "the webhook inbox: events pending and the oldest one's age, events given up on and why, the last run that applied events",
    options: [],
    load: () => import("./commands/webhooks-status.js"),
  },
  {
    name: "webhooks apply",
    summary: "apply the events received: refetch each member and record the changes as a webhooks run (--once: drain and exit)",
    description:
      "Refetch each member the inbox has events for and apply it to the snapshot as sync does (diff, history, " +
      "changes), in short runs of job webhooks that wait while a sync holds the snapshot. A member the service no " +
      "longer has is kept until a full walk proves it gone. A refetch that fails is retried with backoff and given up " +
      "on after webhooks.maxAttempts (see webhooks status). --once: drain what is due and exit (75 when a sync holds " +
      "the snapshot: the events stay pending); otherwise drain every second until SIGINT or SIGTERM.",
    options: [{ flags: "--once", description: "drain what is due now, then exit" }],
    load: () => import("./commands/webhooks-apply.js"),
  },
];

/**
 * The receiver's metrics for `GET /metrics` (prom-client): the counters its textfile carries
 * (counters.ts, read when scraped, so the two never disagree) and how long things take, as
 * histograms in seconds. Labels hold fixed words only (an endpoint, a status code, a reason, a
 * secret's position): never an id of a person or an event. docs/metrics.md lists them.
 */
import { Counter, Histogram, Registry } from "prom-client";
import { REJECT_REASONS, type ReceiverCounters } from "./counters.js";

/** What the server tells the metrics as it answers (server.ts). */
export interface ReceiverTimings {
  /** A request answered: its endpoint, HTTP status and seconds from its head to the last byte of the answer. */
  request(endpoint: ReceiverEndpoint, status: number, seconds: number): void;
  /** An event handed to the inbox until its commit is durable (the 2xx waits for it). */
  accept(seconds: number): void;
}

export type ReceiverEndpoint = "webhook" | "healthz" | "other";

/** Buckets of a request or an inbox commit, in seconds: a group commit's window is 2 ms, an fsync a few ms. */
const LatencyBuckets = [0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10];

/** A counter whose value is read from the receiver's own counters when scraped. */
function mirrored(registry: Registry, name: string, help: string, labelNames: string[], read: () => [Record<string, string>, number][]): void {
  new Counter({
    name: `benefits_sync_${name}`,
    help,
    labelNames,
    registers: [registry],
    collect() {
      this.reset();
      for (const [labels, v] of read()) this.inc(labels, v);
    },
  });
}

/** A registry of the receiver's metrics, and the timings its server reports to. */
export function receiverRegistry(c: ReceiverCounters): { registry: Registry; timings: ReceiverTimings; applyLag: (seconds: number) => void } {
  const registry = new Registry();
  mirrored(registry, "webhooks_received_total", "Deliveries to the webhook path since the receiver started.", [], () => [[{}, c.received]]);
  mirrored(registry, "webhooks_accepted_total", "New events stored durably (answered 2xx).", [], () => [[{}, c.accepted]]);
  mirrored(registry, "webhooks_duplicates_total", "Deliveries of an event id already stored (answered 2xx, stored once).", [], () => [[{}, c.duplicates]]);
  mirrored(registry, "webhooks_ignored_total", "New events of a type the receiver does not act on (stored, answered 2xx).", [], () => [[{}, c.ignored]]);
  mirrored(registry, "webhooks_rejected_total", "Deliveries refused, by reason.", ["reason"], () => REJECT_REASONS.map((r) => [{ reason: r }, c.rejected[r]]));
  mirrored(registry, "webhooks_secret_matched_total", "Signatures verified, by the position of the secret that matched (0 = the first of BENEFITS_WEBHOOK_SECRET).", ["secret"], () =>
    c.secretMatched.map((n, i) => [{ secret: String(i) }, n]),
  );
  mirrored(registry, "webhooks_inbox_commits_total", "Inbox commits (each one fsync for a group of events).", [], () => [[{}, c.commits]]);
  const requests = new Histogram({
    name: "benefits_sync_webhooks_request_duration_seconds",
    help: "Requests to the receiver, from their head to the last byte of the answer, by endpoint (webhook, healthz, other) and HTTP status.",
    labelNames: ["endpoint", "status"],
    buckets: LatencyBuckets,
    registers: [registry],
  });
  const accepts = new Histogram({
    name: "benefits_sync_webhooks_inbox_accept_duration_seconds",
    help: "An event handed to the inbox until its commit is durable (the answer's 2xx waits for it).",
    buckets: LatencyBuckets,
    registers: [registry],
  });
  const lag = new Histogram({
    name: "benefits_sync_webhooks_apply_lag_seconds",
    help: "For each member applied to the snapshot, the time since the oldest of its events was received.",
    buckets: [0.1, 0.5, 1, 2.5, 5, 10, 30, 60, 300, 900, 3600, 21600, 86400],
    registers: [registry],
  });
  return {
    registry,
    applyLag: (seconds) => lag.observe(seconds),
    timings: {
      request: (endpoint, status, seconds) => requests.observe({ endpoint, status: String(status) }, seconds),
      accept: (seconds) => accepts.observe(seconds),
    },
  };
}

/**
 * Starting the receiver from the configuration: everything that can be wrong is found before it
 * listens (no secret and no `--insecure-no-signature`, no service to refetch members from (the
 * worker beside the receiver would apply nothing), a short or malformed secret, an Auth whose
 * variable is unset, a certificate that cannot be read, a file that is not an inbox), so a
 * misconfigured receiver never starts and then refuses or loses deliveries.
 */
import { readFileSync } from "node:fs";
import type { AddressInfo } from "node:net";
import type { Registry } from "prom-client";
import { resolve } from "node:path";
import type { Config } from "../config/index.js";
import { resolveService } from "../config/resolve-service.js";
import { ConfigError } from "../errors.js";
import { ReceiverCounters } from "./counters.js";
import { Inbox, inboxPathFor } from "./inbox.js";
import { openInboxWriter, type InboxWriter, type ThreadInbox } from "./inbox-writer.js";
import { portalAuthFrom, type PortalAuth } from "./portal-auth.js";
import { createReceiver, type Receiver } from "./server.js";
import { checkSecrets, SignatureVerifier } from "./verify.js";
import type { ReceiverTimings } from "./receiver-metrics.js";
import { recordApplyLag } from "../telemetry/otel-metrics.js";
import { receiverInstruments } from "./receiver-otel.js";

export interface StartReceiverOptions {
  readonly env: Readonly<Record<string, string | undefined>>;
  readonly cwd: string;
  /** Override `webhooks.port` / `webhooks.host`. */
  readonly port?: number | undefined;
  readonly host?: string | undefined;
  /** Accept unsigned deliveries when no secret is configured: only when asked for by name. */
  readonly insecureNoSignature?: boolean | undefined;
  readonly windowMs?: number | undefined;
  readonly onStorageError?: ((e: unknown) => void) | undefined;
  /** Keep the metrics `GET /metrics` serves (receiver-metrics.ts): `RunningReceiver.registry`. */
  readonly metrics?: boolean | undefined;
}

export interface RunningReceiver {
  readonly receiver: Receiver;
  readonly inbox: Inbox;
  /** The same inbox on its own thread: what the worker beside the receiver uses. */
  readonly threadInbox: ThreadInbox;
  readonly counters: ReceiverCounters;
  readonly address: AddressInfo;
  /** The URL deliveries are posted to, as this process listens (give the portal the public one). */
  readonly url: string;
  readonly inboxPath: string;
  readonly secrets: number;
  readonly auth: PortalAuth | null;
  /** With `metrics`: the registry to serve (startMetricsEndpoint). */
  readonly registry?: Registry | undefined;
  /** What the worker beside the receiver tells of each member applied (`/metrics` and OpenTelemetry). */
  readonly applyLag: (seconds: number) => void;
  /** Stop accepting, finish the requests in hand, close the inbox. */
  stop(): Promise<void>;
}

const NO_SECRET =
  "no webhook secret is configured: set BENEFITS_WEBHOOK_SECRET to the secret key of the portal's event configuration " +
  "(several, comma-separated, during a rotation). To accept unsigned deliveries anyway (only behind something that " +
  "authenticates the sender), start with --insecure-no-signature";

const NO_SERVICE =
  "webhooks serve applies what it receives, so it needs the service it refetches members from: set BENEFITS_BASE_URL " +
  'and BENEFITS_API_KEY (or "environment" and "environments" in the config file, with BENEFITS_API_KEY). Without them ' +
  "it would answer 2xx to every event and apply none";

/** The service the worker refetches from: a remote one with its key, never guessed, never the embedded sandbox. */
function checkService(config: Config): void {
  if (!config.baseUrl && config.environment === undefined) throw new ConfigError([NO_SERVICE]);
  const target = resolveService(config);
  if (target.kind !== "remote") throw new ConfigError(["webhooks serve: the embedded sandbox sends no events here; set the service (BENEFITS_BASE_URL and BENEFITS_API_KEY) that sends them"]);
}

function readPem(path: string, key: "cert" | "key", cwd: string): Buffer | string {
  try {
    return readFileSync(resolve(cwd, path));
  } catch (e) {
    return `webhooks.tls.${key}: ${path} cannot be read (${(e as { code?: string }).code ?? "error"}); give a PEM file this user can read`;
  }
}

/** What `webhooks serve` would start with, once every check passed. */
export interface ReceiverSetup {
  readonly secrets: readonly string[];
  readonly auth: PortalAuth | null;
  readonly tls: { readonly cert: Buffer; readonly key: Buffer } | undefined;
}

/**
 * Every check the receiver makes before it listens, all problems at once (no service or no API
 * key, a short or malformed secret, an Auth whose variable is unset, a certificate that cannot be read): `webhooks serve`
 * refuses to start on any, and `config check` reports them without starting anything.
 *
 * @example
 * const setup = checkReceiverSetup(config, { env: process.env, cwd: process.cwd() }); // throws ConfigError
 */
export function checkReceiverSetup(config: Config, opts: Pick<StartReceiverOptions, "env" | "cwd" | "insecureNoSignature">): ReceiverSetup {
  const w = config.webhooks;
  const secrets = config.webhookSecrets;
  const problems: string[] = [];
  if (secrets.length === 0 && !opts.insecureNoSignature) problems.push(NO_SECRET);
  const collect = <T>(f: () => T): T | undefined => {
    try {
      return f();
    } catch (e) {
      if (!(e instanceof ConfigError)) throw e;
      problems.push(...e.problems);
      return undefined;
    }
  };
  collect(() => checkSecrets(secrets));
  collect(() => checkService(config));
  const auth = w.auth ? (collect(() => portalAuthFrom(w.auth!, opts.env)) ?? null) : null;
  const pems = w.tls ? ([readPem(w.tls.cert, "cert", opts.cwd), readPem(w.tls.key, "key", opts.cwd)] as const) : undefined;
  for (const p of pems ?? []) if (typeof p === "string") problems.push(p);
  if (problems.length > 0) throw new ConfigError(problems);
  const tls = pems ? { cert: pems[0] as Buffer, key: pems[1] as Buffer } : undefined;
  return { secrets, auth, tls };
}

/**
 * Check everything, open the inbox beside the snapshot and listen.
 *
 * @example
 * const r = await startReceiver(config, { env: process.env, cwd: process.cwd() });
 * console.log(r.url); // http://127.0.0.1:8787/webhooks
 */
export async function startReceiver(config: Config, opts: StartReceiverOptions): Promise<RunningReceiver> {
  const w = config.webhooks;
  const { secrets, auth, tls } = checkReceiverSetup(config, opts);
  const inboxPath = inboxPathFor(config.db);
  // Opened here first: a file that is not an inbox is refused before any thread starts.
  const inbox = Inbox.open(inboxPath);
  const counters = new ReceiverCounters(secrets.length);
  const metrics = opts.metrics ? (await import("./receiver-metrics.js")).receiverRegistry(counters) : undefined;
  // The same counters and timings through OpenTelemetry: the API's no-op unless the CLI started the SDK.
  const otel = receiverInstruments(counters);
  const applyLag = (seconds: number) => (metrics?.applyLag(seconds), recordApplyLag(seconds));
  let writer: InboxWriter | undefined;
  try {
    writer = await openInboxWriter(inboxPath);
    const commitOn = writer;
    const receiver = createReceiver({
      path: w.path,
      maxBodyBytes: w.maxBodyBytes,
      verifier: secrets.length > 0 ? new SignatureVerifier(secrets) : null,
      auth,
      inbox: { accept: (events) => commitOn.accept(events), probe: () => commitOn.probe() },
      counters,
      tls,
      windowMs: opts.windowMs,
      onStorageError: opts.onStorageError,
      timings: metrics ? bothTimings(metrics.timings, otel.timings) : otel.timings,
    });
    const host = opts.host ?? w.host;
    const address = await receiver.listen(opts.port ?? w.port, host);
    const shown = address.family === "IPv6" ? `[${address.address}]` : address.address;
    return {
      receiver,
      inbox,
      threadInbox: commitOn,
      counters,
      address,
      url: `${tls ? "https" : "http"}://${shown}:${address.port}${w.path}`,
      inboxPath,
      secrets: secrets.length,
      auth,
      registry: metrics?.registry,
      applyLag,
      stop: async () => {
        await receiver.stop();
        await commitOn.close();
        inbox.close();
      },
    };
  } catch (e) {
    await writer?.close();
    inbox.close();
    const code = (e as { code?: string }).code;
    if (code === "EADDRINUSE" || code === "EACCES" || code === "EADDRNOTAVAIL") {
      throw new ConfigError([`webhooks.port: cannot listen on ${opts.host ?? w.host}:${opts.port ?? w.port} (${code}); choose another port or host (--port, --host)`]);
    }
    throw e;
  }
}

/** Timings told to both `GET /metrics` and OpenTelemetry. */
function bothTimings(a: ReceiverTimings, b: ReceiverTimings): ReceiverTimings {
  return {
    request: (endpoint, status, seconds) => (a.request(endpoint, status, seconds), b.request(endpoint, status, seconds)),
    accept: (seconds) => (a.accept(seconds), b.accept(seconds)),
  };
}

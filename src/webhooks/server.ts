/**
 * The receiver's HTTP(S) server: `POST {path}` for the service's deliveries, `GET /healthz` for a
 * load balancer. What each answer promises the sender (spec: Delivery 6 and 7: a 2xx means
 * accepted, anything else means "retry"):
 *
 * - 2xx only once the event is committed to the inbox (group commit), a repeated id included;
 * - 401 for a missing or bad signature or Auth, checked on the raw bytes before any parsing;
 * - 413 for a body over the limit, decided from Content-Length before reading (with `Expect:
 *   100-continue`, before any 100 is sent), or by counting the bytes of a chunked body, and the
 *   connection closed after the answer (the rest is never read);
 * - 400 for a body that is not JSON or not the documented shape; another event type is stored as
 *   ignored and gets its 2xx, so the sender does not retry it forever;
 * - 503 when the inbox cannot be written: our fault, so the sender should retry (never a 4xx);
 * - `/healthz`: 200, or 503 when the inbox cannot be written or does not answer in time (health.ts);
 * - 405 for another method, 404 for another path.
 */
import { createServer as createHttpServer, type IncomingMessage, type Server, type ServerResponse } from "node:http";
import { createServer as createHttpsServer } from "node:https";
import type { AddressInfo } from "node:net";
import type { ReceiverCounters, RejectReason } from "./counters.js";
import { eventFromBody } from "./event-body.js";
import { GroupCommit, type AcceptingInbox } from "./group-commit.js";
import { HealthCheck } from "./health.js";
import type { ReceiverEndpoint, ReceiverTimings } from "./receiver-metrics.js";
import type { PortalAuth } from "./portal-auth.js";
import { SIGNATURE_HEADER, type SignatureVerifier } from "./verify.js";

/** What the receiver writes to: accept a group; `probe` throws (or rejects) when the inbox cannot be written. */
export interface ReceiverInbox extends AcceptingInbox {
  probe(): void | Promise<void>;
}

export interface ReceiverOptions {
  readonly path: string;
  readonly maxBodyBytes: number;
  /** null only when started with `--insecure-no-signature`. */
  readonly verifier: SignatureVerifier | null;
  readonly auth: PortalAuth | null;
  readonly inbox: ReceiverInbox;
  readonly counters: ReceiverCounters;
  readonly tls?: { readonly cert: Buffer; readonly key: Buffer } | undefined;
  /** Group commit's window (milliseconds). */
  readonly windowMs?: number | undefined;
  /** A group this large commits at once, window or not (group-commit.ts; tests). */
  readonly maxGroup?: number | undefined;
  /** A storage failure, for the log (the 503 says nothing of it). */
  readonly onStorageError?: ((e: unknown) => void) | undefined;
  readonly now?: (() => Date) | undefined;
  /** Told each request's and each inbox commit's time (the `/metrics` histograms, receiver-metrics.ts). */
  readonly timings?: ReceiverTimings | undefined;
}

export interface Receiver {
  readonly server: Server;
  /**
   * The request listener, for a server of your own: route the webhook path (and `/healthz` if you
   * like) to it and the rest to your app. `stop` then finishes the commits in hand; your server is
   * yours to close. Your server answers `Expect: 100-continue` itself, before this sees the head.
   */
  readonly handle: (req: IncomingMessage, res: ServerResponse) => void;
  listen(port: number, host: string): Promise<AddressInfo>;
  /** Stop accepting, finish the requests in hand (their commits included), then resolve. */
  stop(graceMs?: number): Promise<void>;
}

/** Once stopping, every answer closes its connection, so no idle keep-alive holds the stop up. */
const json = (res: ServerResponse, status: number, body: unknown, headers: Record<string, string> = {}, close = false) => {
  const text = `${JSON.stringify(body)}\n`;
  res.writeHead(status, { "content-type": "application/json", "cache-control": "no-store", "content-length": String(Buffer.byteLength(text)), ...(close ? { connection: "close" } : {}), ...headers });
  res.end(text);
};

/** The body, or "too_large" as soon as more than `max` bytes have arrived (then nothing more is read). */
function readBody(req: IncomingMessage, max: number): Promise<Buffer | "too_large" | "aborted"> {
  return new Promise((resolve) => {
    const chunks: Buffer[] = [];
    let size = 0;
    const done = (v: Buffer | "too_large" | "aborted") => {
      req.off("data", onData).off("end", onEnd).off("error", onAbort).off("close", onClose);
      resolve(v);
    };
    const onData = (c: Buffer) => {
      size += c.length;
      if (size > max) {
        req.pause();
        done("too_large");
      } else chunks.push(c);
    };
    const onEnd = () => done(Buffer.concat(chunks, size));
    const onAbort = () => done("aborted");
    const onClose = () => (req.complete ? undefined : done("aborted"));
    req.on("data", onData).on("end", onEnd).on("error", onAbort).on("close", onClose);
  });
}

/**
 * Build the receiver (not yet listening).
 *
 * @example
 * const r = createReceiver({ path: "/webhooks", maxBodyBytes: 65536, verifier, auth: null, inbox, counters });
 * await r.listen(8787, "127.0.0.1");
 */
export function createReceiver(opts: ReceiverOptions): Receiver {
  const commits = new GroupCommit(opts.inbox, { windowMs: opts.windowMs, maxGroup: opts.maxGroup });
  const health = new HealthCheck(() => opts.inbox.probe(), { onError: opts.onStorageError });
  const c = opts.counters;
  const now = opts.now ?? (() => new Date());
  let stopping = false;
  /** Requests whose sender waits for `100 Continue` before sending the body. */
  const expectsContinue = new WeakSet<IncomingMessage>();

  /** `unread`: answered before the body was read, so the connection closes after it, the rest unread. */
  const answer = (res: ServerResponse, status: number, body: unknown, headers: Record<string, string> = {}, unread = false) => json(res, status, body, headers, unread || stopping);
  const reject = (res: ServerResponse, reason: RejectReason, status: number, message: string, unread: boolean, headers: Record<string, string> = {}) => {
    c.rejected[reason]++;
    answer(res, status, { error: reason, message }, headers, unread);
  };

  async function handle(req: IncomingMessage, res: ServerResponse): Promise<void> {
    const path = (req.url ?? "/").split("?")[0];
    if (path === "/healthz") {
      if (req.method !== "GET" && req.method !== "HEAD") return reject(res, "method_not_allowed", 405, "GET /healthz", true, { allow: "GET, HEAD" });
      const h = await health.check();
      if (!h.ok) return answer(res, 503, h);
      return answer(res, stopping ? 503 : 200, { ok: !stopping, ...(stopping ? { stopping: true } : {}) });
    }
    if (path !== opts.path) return reject(res, "not_found", 404, `deliveries go to POST ${opts.path}`, true);
    c.received++;
    if (req.method !== "POST") return reject(res, "method_not_allowed", 405, `deliveries are POST ${opts.path}`, true, { allow: "POST" });
    if (opts.auth && !opts.auth.check(req.headers)) return reject(res, "unauthorized", 401, "the Auth of the delivery is missing or wrong", true);
    const declared = req.headers["content-length"];
    if (declared !== undefined && Number(declared) > opts.maxBodyBytes) return reject(res, "too_large", 413, `a delivery's body is at most ${opts.maxBodyBytes} bytes`, true);
    // Asked for only now, every check on the head passed: a body too large gets its 413 and no 100.
    if (expectsContinue.has(req)) res.writeContinue();
    const body = await readBody(req, opts.maxBodyBytes);
    if (body === "aborted") return;
    if (body === "too_large") return reject(res, "too_large", 413, `a delivery's body is at most ${opts.maxBodyBytes} bytes`, true);
    if (opts.verifier) {
      const sig = opts.verifier.check(body, req.headers[SIGNATURE_HEADER]);
      if (!sig.ok) return reject(res, sig.reason, 401, sig.reason === "missing_signature" ? "no X-Service-Signature" : "X-Service-Signature does not match the body", false);
      c.secretMatched[sig.secretIndex] = (c.secretMatched[sig.secretIndex] ?? 0) + 1;
    }
    const parsed = eventFromBody(body, now().toISOString());
    if (!parsed.ok) return reject(res, "bad_request", 400, parsed.problem, false);
    let isNew: boolean;
    try {
      const submitted = performance.now();
      isNew = await commits.submit(parsed.event);
      opts.timings?.accept((performance.now() - submitted) / 1000);
    } catch (e) {
      opts.onStorageError?.(e);
      return reject(res, "unavailable", 503, "the event could not be stored; retry", false, { "retry-after": "5" });
    }
    c.commits = commits.commits;
    if (!isNew) c.duplicates++;
    else if (parsed.event.memberId === null) c.ignored++;
    else c.accepted++;
    answer(res, 200, { accepted: true, duplicate: !isNew });
  }

  const listener = (req: IncomingMessage, res: ServerResponse) => {
    const timings = opts.timings;
    if (timings) {
      const started = performance.now();
      const path = (req.url ?? "/").split("?")[0];
      const endpoint: ReceiverEndpoint = path === opts.path ? "webhook" : path === "/healthz" ? "healthz" : "other";
      res.once("finish", () => timings.request(endpoint, res.statusCode, (performance.now() - started) / 1000));
    }
    handle(req, res).catch((e: unknown) => {
      // A fault of ours after the checks: the sender should retry, as for storage.
      opts.onStorageError?.(e);
      if (!res.headersSent) answer(res, 503, { error: "unavailable", message: "retry" }, {}, true);
      else res.destroy();
    });
  };
  const server = opts.tls ? createHttpsServer({ cert: opts.tls.cert, key: opts.tls.key }, listener) : createHttpServer(listener);
  // `Expect: 100-continue`: Node would send the 100 before the handler sees the head.
  server.on("checkContinue", (req: IncomingMessage, res: ServerResponse) => {
    expectsContinue.add(req);
    listener(req, res);
  });
  // A sender that opens a connection and sends nothing holds no slot for long.
  server.headersTimeout = 10_000;
  server.requestTimeout = 30_000;
  server.keepAliveTimeout = 5_000;

  return {
    server,
    handle: listener,
    listen: (port, host) =>
      new Promise((resolve, reject) => {
        server.once("error", reject);
        server.listen(port, host, () => {
          server.off("error", reject);
          resolve(server.address() as AddressInfo);
        });
      }),
    stop: (graceMs = 10_000) =>
      new Promise((resolve) => {
        stopping = true;
        // Events read but not yet in a group are committed now; their requests then get their 2xx.
        commits.flush();
        const cap = setTimeout(() => server.closeAllConnections(), graceMs);
        cap.unref();
        server.close(() => {
          clearTimeout(cap);
          resolve();
        });
        server.closeIdleConnections();
      }),
  };
}

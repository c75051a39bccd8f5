import pLimit from "p-limit";
import { errors, request, type Dispatcher } from "undici";
import { ApiError, BenefitsSyncError, ResponseShapeError, TransportError } from "../errors.js";
import type { Logger } from "./logger.js";
import { createRateLimiter } from "./rate-limiter.js";
import { errorFromResponse } from "./response-errors.js";
import { shownPath } from "./people-endpoints.js";
import { parseRetryAfter, retryDelay, RETRY_STATUSES, type RetryPolicy } from "./retry.js";
import { parseJson } from "./shape.js";
import type { Sleep } from "./sleep.js";
import { toTransportError } from "./transport-errors.js";
import { hostAndPort } from "../url-display.js";
import { attemptSpan, serverAttributes } from "../telemetry/http-span.js";
import { routeOf } from "./endpoints.js";

export type HttpMethod = "GET" | "POST" | "PATCH";
export type Query = Record<string, string | undefined>;

/** Connect, headers and body deadlines in milliseconds (undici's 300 s defaults are far too long). */
export interface Deadlines {
  readonly connectMs: number;
  readonly headersMs: number;
  /** Both the longest pause between body chunks and the longest time to read a whole body. */
  readonly bodyMs: number;
}

export const DEFAULT_DEADLINES: Deadlines = Object.freeze({ connectMs: 10_000, headersMs: 30_000, bodyMs: 30_000 });

export interface TransportOptions {
  readonly baseUrl: string;
  readonly apiKey: string;
  readonly dispatcher: Dispatcher;
  readonly concurrency: number;
  readonly requestsPerSecond: number;
  readonly deadlines: Deadlines;
  readonly retry: RetryPolicy;
  readonly logger: Logger;
  readonly sleep: Sleep;
  readonly random: () => number;
}

export interface SendRequest {
  readonly method: HttpMethod;
  /** The path with its version prefix, path parameters already encoded: `/v1/members/abc`. */
  readonly path: string;
  readonly query?: Query | undefined;
  readonly body?: unknown;
  readonly signal?: AbortSignal | undefined;
  /** Leave a 2xx body unparsed (the caller reads the text itself). */
  readonly noParse?: boolean | undefined;
}

/** Counters of one client, for progress lines and the benchmark. */
export interface TransportStats {
  /** Attempts sent, retries included. */
  requests: number;
  /** Attempts that were a retry of an earlier one. */
  retries: number;
}

export interface Transport {
  /** Send one request with the client's retry policy; resolves to the parsed JSON (undefined for an empty 2xx body). */
  send(req: SendRequest): Promise<unknown>;
  /** The same, also giving the body's text (the sync fingerprints list items by their text) and the status. */
  sendWithText(req: SendRequest): Promise<{ value: unknown; text: string; status: number }>;
  /**
   * The same, giving a 2xx body's bytes undecoded and unparsed, as the chunks they arrived in: a
   * page the caller recognises by them is never copied into one buffer, nor decoded.
   */
  sendForChunks(req: SendRequest): Promise<readonly Buffer[]>;
  readonly stats: TransportStats;
}

type Outcome = { ok: true; chunks: readonly Buffer[]; status: number } | { ok: false; error: BenefitsSyncError; status: number; retryAfterMs?: number | undefined };

/**
 * The HTTP layer of the client: one `undici.request` per attempt through the given dispatcher, the
 * bearer key on every request, one concurrency limit and one requests-per-second budget shared by
 * all calls, and retries with full-jitter backoff for what is safe to retry:
 * - a GET on 429, 502, 503, 504 (honouring `Retry-After` up to `retryAfterCapMs`) or a connection fault;
 * - a POST or PATCH only when the connection was refused or never opened, never once it may have arrived.
 * When the attempts run out, the last error is thrown.
 *
 * @example
 * const t = createTransport({ baseUrl, apiKey, dispatcher: new Agent(), ...defaults });
 * const body = await t.send({ method: "GET", path: "/v2/designs" });
 */
export function createTransport(opts: TransportOptions): Transport {
  const limit = pLimit(Math.max(1, opts.concurrency));
  const waitForSlot = createRateLimiter(opts.requestsPerSecond, opts.sleep);
  const stats: TransportStats = { requests: 0, retries: 0 };
  const where = hostAndPort(opts.baseUrl);
  const server = serverAttributes(opts.baseUrl);
  const headers = {
    authorization: `Bearer ${opts.apiKey}`,
    accept: "application/json",
    "user-agent": "benefits-sync",
  };

  async function attempt(req: SendRequest, pathWithQuery: string, attemptNo: number): Promise<Outcome> {
    await waitForSlot(req.signal);
    stats.requests++;
    // A span per attempt, as the semantic conventions ask of retries; it opens once the rate limit let it go.
    return attemptSpan({ method: req.method, route: routeOf(req.path), server, attempt: attemptNo }, () => sendOnce(req, pathWithQuery, attemptNo));
  }

  async function sendOnce(req: SendRequest, pathWithQuery: string, attemptNo: number): Promise<Outcome> {
    const started = performance.now();
    const res = await request(`${opts.baseUrl}${pathWithQuery}`, {
      method: req.method,
      dispatcher: opts.dispatcher,
      headers: req.body === undefined ? headers : { ...headers, "content-type": "application/json" },
      body: req.body === undefined ? undefined : JSON.stringify(req.body),
      signal: req.signal,
      headersTimeout: opts.deadlines.headersMs,
      bodyTimeout: opts.deadlines.bodyMs,
    });
    // undici keeps the socket busy until the body is consumed: always read it, errors included.
    const chunks = await readBody(res.body, opts.deadlines.bodyMs);
    const status = res.statusCode;
    opts.logger.debug("http", {
      method: req.method,
      path: req.path,
      status,
      ms: Math.round(performance.now() - started),
      attempt: attemptNo,
    });
    if (status >= 200 && status < 300) return { ok: true, chunks, status };
    const retryAfterMs = parseRetryAfter(res.headers["retry-after"]);
    return { ok: false, status, retryAfterMs, error: errorFromResponse({ status, method: req.method, path: pathWithQuery, text: decodeUtf8(joined(chunks)), retryAfterMs }) };
  }

  async function sendWithText(req: SendRequest): Promise<{ value: unknown; text: string; status: number }> {
    const { chunks, status } = await sendOk(req);
    const text = decodeUtf8(joined(chunks));
    const value = req.noParse || text.trim() === "" ? undefined : parseJson(text, `${req.method} ${req.path}`, status);
    return { value, text, status };
  }

  const sendForChunks = async (req: SendRequest): Promise<readonly Buffer[]> => (await sendOk(req)).chunks;

  /** One request with retries: the 2xx answer's bytes and status, or the last error thrown. */
  async function sendOk(req: SendRequest): Promise<{ chunks: readonly Buffer[]; status: number }> {
    const pathWithQuery = req.path + queryString(req.query);
    const idempotent = req.method === "GET";
    for (let attemptNo = 0; ; attemptNo++) {
      let error: BenefitsSyncError;
      let retry: boolean;
      let retryAfterMs: number | undefined;
      try {
        const outcome = await limit(() => attempt(req, pathWithQuery, attemptNo));
        if (outcome.ok) return outcome;
        error = outcome.error;
        retryAfterMs = outcome.retryAfterMs;
        retry = idempotent && RETRY_STATUSES.has(outcome.status);
      } catch (err) {
        // The caller's own abort is not a fault of the service: pass it through untouched.
        if (req.signal?.aborted) throw req.signal.reason ?? err;
        if (err instanceof ApiError || err instanceof ResponseShapeError) throw err;
        error = toTransportError(err, req.method, shownPath(pathWithQuery), where);
        retry = error instanceof TransportError && error.retryable;
      }
      if (!retry || attemptNo + 1 >= opts.retry.maxAttempts) throw error;
      const delayMs =
        retryAfterMs !== undefined
          ? Math.min(retryAfterMs, opts.retry.retryAfterCapMs)
          : retryDelay(attemptNo, opts.retry, opts.random);
      stats.retries++;
      opts.logger.warn("retrying", {
        method: req.method,
        path: req.path,
        attempt: attemptNo + 1,
        delayMs,
        reason: error instanceof TransportError ? error.causeCode : error.code,
        status: error instanceof ApiError ? error.status : undefined,
      });
      await opts.sleep(delayMs, req.signal);
    }
  }

  const send = async (req: SendRequest): Promise<unknown> => (await sendWithText(req)).value;
  return { send, sendWithText, sendForChunks, stats };
}

/** Build `?a=1&b=2` from the defined values, or "" when there are none. */
export function queryString(query: Query | undefined): string {
  if (!query) return "";
  const params = new URLSearchParams();
  for (const [k, v] of Object.entries(query)) if (v !== undefined) params.append(k, v);
  const s = params.toString();
  return s ? `?${s}` : "";
}

/** A body's text as UTF-8 (a leading byte-order mark dropped, malformed bytes replaced), as `fetch` reads it. */
export function decodeUtf8(bytes: Buffer): string {
  const text = bytes.toString("utf8");
  return text.charCodeAt(0) === 0xfeff ? text.slice(1) : text;
}

/** A body's chunks as one buffer (the chunk itself when there is one). */
export function joined(chunks: readonly Buffer[]): Buffer {
  return chunks.length === 1 ? chunks[0]! : Buffer.concat(chunks);
}

/**
 * Read a whole body as the chunks it arrived in, failing with code BODY_DEADLINE if it takes
 * longer than `ms` in total. The chunks are not joined: a no-change walk recognises most pages by
 * their hash alone, and joining every body into a new buffer doubled what the walk's thread
 * allocated outside its heap, which V8 answers with full collections.
 */
function readBody(body: Dispatcher.ResponseData["body"], ms: number): Promise<Buffer[]> {
  return new Promise<Buffer[]>((resolve, reject) => {
    const chunks: Buffer[] = [];
    // undici's bodyTimeout only bounds the pause between chunks; a server trickling one byte a
    // second would never trip it, so the whole read gets a deadline too.
    const timer = setTimeout(() => {
      body.destroy(Object.assign(new Error(`body not complete after ${ms} ms`), { code: "BODY_DEADLINE" }));
    }, ms);
    let settled = false;
    const done = (err?: Error) => {
      settled = true;
      clearTimeout(timer);
      if (err) reject(err);
      else resolve(chunks);
    };
    body.on("data", (chunk: Buffer) => chunks.push(chunk));
    body.once("end", () => done());
    body.once("error", (err: Error) => done(err));
    // Closed with neither an end nor an error: the read was cut short. (Every body closes after
    // its end: no error is made for those.)
    body.once("close", () => settled || done(new errors.RequestAbortedError()));
  });
}

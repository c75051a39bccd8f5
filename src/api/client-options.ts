import type { Dispatcher } from "undici";
import { ConfigError } from "../errors.js";
import type { ListResource } from "./endpoints.js";
import { resolveBaseUrl } from "../config/environments.js";
import { silentLogger, type Logger } from "./logger.js";
import { DEFAULT_RETRY, type RetryPolicy } from "./retry.js";
import { defaultSleep, type Sleep } from "./sleep.js";
import { DEFAULT_DEADLINES, type Deadlines } from "./transport.js";

/** Everything `createClient()` accepts. Only `baseUrl` and `apiKey` are required. */
export interface ClientOptions {
  /** e.g. `http://127.0.0.1:4010`; a trailing slash or a path prefix is fine. */
  baseUrl: string;
  /** The bearer key. Registered for redaction: it never appears in an error or a log line. */
  apiKey: string;
  /** An undici dispatcher (a `MockAgent` in tests). Default: an Agent built with the deadlines. */
  dispatcher?: Dispatcher | undefined;
  /** Requests in flight at once, for all calls of this client; default 4. */
  concurrency?: number | undefined;
  /** Budget shared by all calls of this client; default 0 = unlimited. */
  requestsPerSecond?: number | undefined;
  /** Defaults 10 s / 30 s / 30 s. `connectMs` applies to the default Agent only. */
  deadlines?: { connectMs?: number | undefined; headersMs?: number | undefined; bodyMs?: number | undefined } | undefined;
  /** Defaults 5 attempts, 250 ms base, 10 s cap, Retry-After honoured up to 60 s. */
  retry?: Partial<RetryPolicy> | undefined;
  /** Sent as `limit` when set; never relied on. `default` covers the resources not named. */
  pageSize?: Partial<Record<"default" | ListResource, number | undefined>> | undefined;
  /** The claim service-date range's parameter names; default `serviceDateFrom` / `serviceDateTo`. */
  claimDateParams?: { from: string; to: string } | undefined;
  /** The id field of each listed resource; default `id`. */
  idFields?: Partial<Record<ListResource, string | undefined>> | undefined;
  /** Receives debug lines per request and a warning per retry; never the key. */
  logger?: Logger | undefined;
  /** Injectable for tests. */
  sleep?: Sleep | undefined;
  /** Injectable jitter source, uniform in [0, 1). */
  random?: (() => number) | undefined;
}

/** ClientOptions with every default applied and every number checked. */
export interface ResolvedClientOptions {
  readonly baseUrl: string;
  readonly apiKey: string;
  readonly dispatcher: Dispatcher | undefined;
  readonly concurrency: number;
  readonly requestsPerSecond: number;
  readonly deadlines: Deadlines;
  readonly retry: RetryPolicy;
  readonly pageSize: Partial<Record<"default" | ListResource, number | undefined>>;
  readonly claimDateParams: { readonly from: string; readonly to: string };
  readonly idFields: Partial<Record<ListResource, string | undefined>>;
  readonly logger: Logger;
  readonly sleep: Sleep;
  readonly random: () => number;
}

/**
 * Apply the defaults and check every value; every bad one is reported in one {@link ConfigError}.
 *
 * @example
 * resolveClientOptions({ baseUrl: "http://127.0.0.1:4010", apiKey: key }).retry.maxAttempts // 5
 */
export function resolveClientOptions(opts: ClientOptions): ResolvedClientOptions {
  const problems: string[] = [];
  const num = (key: string, value: number | undefined, fallback: number, min: number, integer = false): number => {
    if (value === undefined) return fallback;
    if (typeof value !== "number" || !Number.isFinite(value) || value < min || (integer && !Number.isInteger(value))) {
      problems.push(`${key}: expected ${integer ? "an integer" : "a number"} >= ${min}, got ${JSON.stringify(value)}`);
      return fallback;
    }
    return value;
  };
  let baseUrl = "";
  try {
    baseUrl = resolveBaseUrl({ baseUrl: opts.baseUrl });
  } catch (err) {
    problems.push(...(err instanceof ConfigError ? err.problems : [String(err)]));
  }
  if (typeof opts.apiKey !== "string" || opts.apiKey.trim() === "") problems.push("apiKey: required (BENEFITS_API_KEY)");
  else if (/[\r\n]/.test(opts.apiKey)) problems.push("apiKey: must not contain a line break");

  const d = opts.deadlines ?? {};
  const r = opts.retry ?? {};
  const resolved: ResolvedClientOptions = {
    baseUrl,
    apiKey: opts.apiKey,
    dispatcher: opts.dispatcher,
    concurrency: num("concurrency", opts.concurrency, 4, 1, true),
    requestsPerSecond: num("requestsPerSecond", opts.requestsPerSecond, 0, 0),
    deadlines: {
      connectMs: num("deadlines.connectMs", d.connectMs, DEFAULT_DEADLINES.connectMs, 1, true),
      headersMs: num("deadlines.headersMs", d.headersMs, DEFAULT_DEADLINES.headersMs, 1, true),
      bodyMs: num("deadlines.bodyMs", d.bodyMs, DEFAULT_DEADLINES.bodyMs, 1, true),
    },
    retry: {
      maxAttempts: num("retry.maxAttempts", r.maxAttempts, DEFAULT_RETRY.maxAttempts, 1, true),
      baseMs: num("retry.baseMs", r.baseMs, DEFAULT_RETRY.baseMs, 0),
      capMs: num("retry.capMs", r.capMs, DEFAULT_RETRY.capMs, 0),
      retryAfterCapMs: num("retry.retryAfterCapMs", r.retryAfterCapMs, DEFAULT_RETRY.retryAfterCapMs, 0),
    },
    pageSize: { ...opts.pageSize },
    claimDateParams: opts.claimDateParams ?? { from: "serviceDateFrom", to: "serviceDateTo" },
    idFields: { ...opts.idFields },
    logger: opts.logger ?? silentLogger,
    sleep: opts.sleep ?? defaultSleep,
    random: opts.random ?? Math.random,
  };
  for (const [k, v] of Object.entries(resolved.pageSize)) num(`pageSize.${k}`, v, 0, 1, true);
  if (!resolved.claimDateParams.from || !resolved.claimDateParams.to) problems.push("claimDateParams: both from and to are required");
  if (problems.length) throw new ConfigError(problems);
  return resolved;
}

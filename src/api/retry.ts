/** The retry policy of the client: how many attempts, and how long to wait between them. */
export interface RetryPolicy {
  /** Attempts in total, the first one included. 1 disables retries. */
  readonly maxAttempts: number;
  /** The backoff ceiling of the first retry; it doubles on each further retry. */
  readonly baseMs: number;
  /** The backoff ceiling never exceeds this. */
  readonly capMs: number;
  /** A server's `Retry-After` is honoured up to this many milliseconds. */
  readonly retryAfterCapMs: number;
}

export const DEFAULT_RETRY: RetryPolicy = Object.freeze({
  maxAttempts: 5,
  baseMs: 250,
  capMs: 10_000,
  retryAfterCapMs: 60_000,
});

/**
 * Statuses worth retrying for a GET: rate limited, a gateway that may recover, or a 500. The spec
 * blames a 500 on the request's payload, and a GET has none, so on a read it is a passing fault
 * (writes are never retried on it).
 */
export const RETRY_STATUSES: ReadonlySet<number> = new Set([429, 500, 502, 503, 504]);

/**
 * Exponential backoff with full jitter: a uniform delay in `[0, min(capMs, baseMs * 2^attempt)]`.
 * Full jitter spreads the retries of many clients apart, where a fixed delay would synchronise them.
 *
 * @param attempt 0 for the first retry, 1 for the second, ...
 * @param random a source of uniform numbers in `[0, 1)`; `Math.random` by default
 * @example
 * retryDelay(3, { baseMs: 250, capMs: 10_000 }) // somewhere in [0, 2000]
 */
export function retryDelay(
  attempt: number,
  policy: { baseMs: number; capMs: number },
  random: () => number = Math.random,
): number {
  const ceiling = Math.min(policy.capMs, policy.baseMs * 2 ** Math.max(0, attempt));
  const r = Math.min(Math.max(random(), 0), 1);
  return Math.floor(r * ceiling);
}

/**
 * Read a `Retry-After` header: delay-seconds (`"2"`) or an HTTP date. Returns milliseconds to wait
 * (0 for a date in the past), or `undefined` when the header is absent or unreadable.
 *
 * @example
 * parseRetryAfter("2")                                   // 2000
 * parseRetryAfter("Wed, 21 Oct 2015 07:28:00 GMT", now)  // ms from now until then, at least 0
 */
export function parseRetryAfter(
  header: string | readonly string[] | undefined | null,
  now: number = Date.now(),
): number | undefined {
  const value = (Array.isArray(header) ? header[0] : header) as string | undefined | null;
  if (value === undefined || value === null) return undefined;
  const text = value.trim();
  if (text === "") return undefined;
  if (/^\d+$/.test(text)) return Number(text) * 1000;
  // A negative or fractional number is neither form the RFC allows: ignore it rather than guess.
  if (/^[-+]?\d*\.?\d+$/.test(text)) return undefined;
  const at = Date.parse(text);
  if (!Number.isFinite(at)) return undefined;
  return Math.max(0, at - now);
}

import type { Sleep } from "./sleep.js";

/** Waits before each request so that a client never exceeds its requests-per-second budget. */
export type RateLimiter = (signal?: AbortSignal) => Promise<void>;

/**
 * A limiter that spaces requests `1000 / requestsPerSecond` ms apart, shared by every call of one
 * client (the service's rate limits are not documented, so the budget is configuration).
 * `requestsPerSecond <= 0` means unlimited. Each caller reserves its slot synchronously, so
 * concurrent callers queue in call order without a timer per caller.
 *
 * @example
 * const wait = createRateLimiter(5, defaultSleep);
 * await wait(); // returns at once, then every 200 ms for the following callers
 */
export function createRateLimiter(requestsPerSecond: number, sleep: Sleep, now: () => number = () => performance.now()): RateLimiter {
  if (!(requestsPerSecond > 0)) return async () => {};
  const spacing = 1000 / requestsPerSecond;
  let nextFree = -Infinity;
  return async (signal) => {
    const t = now();
    const slot = Math.max(t, nextFree);
    nextFree = slot + spacing;
    if (slot > t) await sleep(slot - t, signal);
  };
}

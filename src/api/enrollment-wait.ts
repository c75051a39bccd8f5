import type { EnrollmentRequest } from "../../schemas/enrollment-request.js";
import { TimeoutError } from "../errors.js";
import type { Sleep } from "./sleep.js";

export interface WaitOptions {
  /** Give up after this long; default 120 000 ms. */
  timeoutMs?: number | undefined;
  signal?: AbortSignal | undefined;
  /** First pause between polls; default 500 ms. It doubles up to `maxIntervalMs`. */
  intervalMs?: number | undefined;
  /** Longest pause between polls; default 5 000 ms. */
  maxIntervalMs?: number | undefined;
}

const SETTLED = new Set(["succeeded", "failed"]);

/**
 * Poll an enrollment request until it `succeeded` or `failed` (both resolve: a failure is an
 * answer, its details are in the portal), with doubling pauses and equal jitter. Throws a
 * {@link TimeoutError} if it has not settled within `timeoutMs`; the poll in flight at that moment
 * is aborted, so the deadline holds even against a server that hangs.
 *
 * @example
 * const done = await pollEnrollmentRequest((signal) => client.getEnrollmentRequest(id, signal), id, { timeoutMs: 60_000 }, sleep, Math.random);
 */
export async function pollEnrollmentRequest<R extends EnrollmentRequest & { readonly rawStatus?: string }>(
  get: (signal: AbortSignal) => Promise<R>,
  id: string,
  opts: WaitOptions,
  sleep: Sleep,
  random: () => number,
): Promise<R> {
  const timeoutMs = opts.timeoutMs ?? 120_000;
  const intervalMs = opts.intervalMs ?? 500;
  const maxIntervalMs = opts.maxIntervalMs ?? 5_000;
  const deadline = new AbortController();
  const timer = setTimeout(() => deadline.abort(new Error("deadline")), timeoutMs);
  const signal = opts.signal ? AbortSignal.any([opts.signal, deadline.signal]) : deadline.signal;
  let last: string | undefined;
  try {
    for (let n = 0; ; n++) {
      const req = await get(signal);
      // The timeout names the status as the service spelled it (an unknown one is still polled).
      last = req.rawStatus || req.status;
      if (SETTLED.has(req.status)) return req;
      const ceiling = Math.min(maxIntervalMs, intervalMs * 2 ** n);
      await sleep(ceiling / 2 + (random() * ceiling) / 2, signal);
    }
  } catch (err) {
    if (deadline.signal.aborted && !opts.signal?.aborted) {
      throw new TimeoutError(
        `enrollment request ${id} did not settle within ${timeoutMs} ms (last status: ${last ?? "none received"})`,
        { cause: err },
      );
    }
    throw err;
  } finally {
    clearTimeout(timer);
  }
}

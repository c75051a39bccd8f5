import { setTimeout as delay } from "node:timers/promises";

/** Sleep `ms`, rejecting with the signal's reason if it aborts first. Injectable in tests. */
export type Sleep = (ms: number, signal?: AbortSignal) => Promise<void>;

/**
 * The default {@link Sleep}: a timer that an `AbortSignal` can cut short.
 *
 * @example
 * await defaultSleep(250, controller.signal);
 */
export const defaultSleep: Sleep = async (ms, signal) => {
  if (ms <= 0) {
    signal?.throwIfAborted();
    return;
  }
  try {
    await delay(ms, undefined, signal ? { signal } : undefined);
  } catch (err) {
    // timers/promises rejects with a generic AbortError; callers want the reason they aborted with.
    if (signal?.aborted) throw signal.reason ?? err;
    throw err;
  }
};

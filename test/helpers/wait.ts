/**
 * Waiting for an event in a test: poll until it has happened. The deadline only decides when a
 * test whose event never comes gives up, naming the event; it is far above any delay a loaded
 * machine adds and below vitest's testTimeout, so a slow run waits longer and still passes.
 */
export const EVENT_DEADLINE_MS = 300_000;

/**
 * Resolve with the first value of `probe` that is neither undefined nor false.
 *
 * @example const url = await waitUntil("the listening line", () => /listening on (\S+)/.exec(out)?.[1]);
 */
export async function waitUntil<T>(what: string, probe: () => T | undefined | false | Promise<T | undefined | false>, deadlineMs = EVENT_DEADLINE_MS): Promise<T> {
  const giveUp = performance.now() + deadlineMs;
  for (;;) {
    const v = await probe();
    if (v !== undefined && v !== false) return v;
    if (performance.now() > giveUp) throw new Error(`waited ${deadlineMs} ms for ${what}; it never happened`);
    await new Promise((r) => setTimeout(r, 10));
  }
}

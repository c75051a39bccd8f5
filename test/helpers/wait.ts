/**
 * Waiting for an event in a test: poll until it has happened. The deadline only decides when a
 * test whose event never comes gives up, naming the event. No single wait for an event is longer:
 * the slowest event of the suite (a CLI's whole run, a sandbox's banner) takes seconds, some 15 s
 * with two other suites on the 2 cores (load average 15), and a defect must fail a test in well
 * under vitest's testTimeout (vitest.config.ts), not hold it for minutes.
 */
export const EVENT_DEADLINE_MS = 60_000;

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

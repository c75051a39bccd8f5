/**
 * A clock for the scheduler (its `now` and `sleepUntil`) that stands still until the test moves
 * it, and then only to a time someone waits for: no test of the scheduler waits for wall-clock
 * time, so none depends on how fast a loaded machine gets there.
 */
import { waitUntil } from "./wait.js";

export class DrivenClock {
  private readonly sleepers: { at: number; wake: () => void }[] = [];
  constructor(private t: number) {}

  readonly now = () => new Date(this.t);

  readonly sleepUntil = (at: Date, signal: AbortSignal) =>
    new Promise<void>((resolve, reject) => {
      if (at.getTime() <= this.t) return resolve();
      const s = { at: at.getTime(), wake: resolve };
      this.sleepers.push(s);
      signal.addEventListener("abort", () => {
        const i = this.sleepers.indexOf(s);
        if (i >= 0) this.sleepers.splice(i, 1);
        reject(signal.reason);
      });
    });

  /** Move to the earliest waiting time before `until` and wake who waits for it; false when none is. */
  async step(until: Date): Promise<boolean> {
    // The scheduler waits again synchronously after each fire; a few turns of the loop at most.
    for (let i = 0; i < 100 && this.sleepers.length === 0; i++) await new Promise((r) => setImmediate(r));
    if (this.sleepers.length === 0) throw new Error("the scheduler never waited on the clock");
    return this.wakeFirstBefore(until.getTime());
  }

  /**
   * Until `done` settles: each time no run is in progress (`running()` is 0) and someone waits on
   * the clock for a time within `horizonMs`, move the clock there and wake them (a scheduler
   * polling for the snapshot another run held). Returns what `done` gives.
   *
   * @example await clock.drive(s.idle(), () => runs.active, 60_000)
   */
  async drive<T>(done: Promise<T>, running: () => number, horizonMs: number): Promise<T> {
    let settled = false;
    void done.then(
      () => (settled = true),
      () => (settled = true),
    );
    while (!settled) {
      await waitUntil("the fires to end, or every fire to wait on the clock with no run in progress", () => settled || (running() === 0 && this.sleepers.some((s) => s.at < this.t + horizonMs)), 50_000);
      if (!settled) this.wakeFirstBefore(this.t + horizonMs);
    }
    return done;
  }

  private wakeFirstBefore(until: number): boolean {
    this.sleepers.sort((a, b) => a.at - b.at);
    if (this.sleepers.length === 0 || this.sleepers[0]!.at >= until) return false;
    const s = this.sleepers.shift()!;
    this.t = s.at;
    s.wake();
    return true;
  }
}

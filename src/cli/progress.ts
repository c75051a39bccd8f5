import type { SyncProgress } from "../pipeline/sync.js";
import type { Output } from "./context.js";

interface Tally {
  pages: number;
  records: number;
  /** The store's count (what the summary reports), once it has told one. */
  seen?: number;
  scopes: Map<string, { pages: number; records: number; done: boolean }>;
}

/**
 * Records of a resource as the summary counts them (each member once, however many groups list it;
 * a page recognised by its bytes counts its records): the store's count once it has told one, else
 * the records fetched.
 */
const shown = (t: Tally): number => t.seen ?? t.records;

/**
 * Progress of a run, per resource: pages, records and rate. On a terminal one line is redrawn
 * (at most five times a second); elsewhere (cron, a pipe) a JSON line per resource every few
 * seconds, so a log shows the run is alive without drowning in one line per page.
 */
export function progressReporter(out: Output & { isTTY?: boolean }, opts: { intervalMs?: number; now?: () => number } = {}) {
  const now = opts.now ?? Date.now;
  const tty = out.isTTY === true;
  const interval = opts.intervalMs ?? (tty ? 200 : 5000);
  const started = now();
  const tallies = new Map<string, Tally>();
  let last = 0;

  const line = (): string =>
    [...tallies]
      .map(([r, t]) => {
        const done = [...t.scopes.values()].filter((s) => s.done).length;
        const rate = Math.round(shown(t) / Math.max(0.001, (now() - started) / 1000));
        return `${r}: ${t.pages} pages, ${shown(t)} records, ${rate}/s` + (t.scopes.size > 1 ? `, ${done}/${t.scopes.size} groups` : "");
      })
      .join(" | ");

  const emit = (final: boolean) => {
    if (tty) {
      out.write(`\r\x1b[2K${line()}${final ? "\n" : ""}`);
    } else {
      for (const [resource, t] of tallies) {
        const seconds = (now() - started) / 1000;
        out.write(
          `${JSON.stringify({ event: final ? "walked" : "progress", resource, pages: t.pages, records: shown(t), ratePerSecond: Math.round(shown(t) / Math.max(0.001, seconds)) })}\n`,
        );
      }
    }
  };

  return {
    /** Feed it the sync's progress events. */
    update(p: SyncProgress): void {
      const t: Tally = tallies.get(p.resource) ?? { pages: 0, records: 0, scopes: new Map() };
      tallies.set(p.resource, t);
      const prev = t.scopes.get(p.scope) ?? { pages: 0, records: 0, done: false };
      t.pages += Math.max(0, p.pages - prev.pages);
      t.records += Math.max(0, p.records - prev.records);
      if (p.seen !== undefined) t.seen = Math.max(t.seen ?? 0, p.seen);
      // A page's event comes once the store has it, so a scope's end may be told before its last pages'.
      t.scopes.set(p.scope, { pages: Math.max(prev.pages, p.pages), records: Math.max(prev.records, p.records), done: prev.done || p.done });
      if (now() - last >= interval) {
        last = now();
        emit(false);
      }
    },
    /** The last word: the final tallies (a newline on a terminal). */
    finish(): void {
      if (tallies.size > 0) emit(true);
    },
  };
}

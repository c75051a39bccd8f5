/**
 * The scheduler's own record in the snapshot: until when a scheduler was last seen running on it
 * (`_meta` key {@link SEEN_KEY}, an ISO time). Written at start, every minute while running, and at
 * stop; a restart runs the fires due after it (missed while no scheduler ran), and a snapshot
 * without it has never had a scheduler, so nothing was missed. Several schedulers on one file
 * share it: the latest to write wins, which is what "last seen running" means.
 */
import type { Database } from "better-sqlite3";

export const SEEN_KEY = "scheduler_last_seen";

/** When a scheduler was last seen running on this snapshot, or undefined when none ever was. */
export function schedulerLastSeen(db: Database): Date | undefined {
  const v = db.prepare("SELECT value FROM _meta WHERE key = ?").pluck().get(SEEN_KEY) as string | undefined;
  const t = v === undefined ? NaN : Date.parse(v);
  return Number.isNaN(t) ? undefined : new Date(t);
}

export function markSchedulerSeen(db: Database, at: Date): void {
  db.prepare("INSERT INTO _meta (key, value) VALUES (?, ?) ON CONFLICT (key) DO UPDATE SET value = excluded.value").run(SEEN_KEY, at.toISOString());
}

/**
 * What a delivered folder says about the run it carries, read from the snapshot (never from the
 * clock, so the same run always gives the same manifest): when it started and finished, what it
 * walked (its resources and claims window, as the run recorded its options), and the snapshot's
 * own id, so that a loader can tell two snapshots' run 7 apart.
 */
import type { Database } from "better-sqlite3";
import { randomUUID } from "node:crypto";

export interface RunFacts {
  /** Null only for a snapshot without one opened read-only. */
  readonly snapshotId: string | null;
  /** UTC, ISO 8601, as the run recorded them; `finishedAt` null only for a run still running. */
  readonly startedAt: string;
  readonly finishedAt: string | null;
  readonly walked: { readonly resources: readonly string[]; readonly claimsWindow: { readonly from: string; readonly to: string } | null };
}

/** The facts of run `runId` (a run the snapshot holds); may record the snapshot's id (see ensureSnapshotId). */
export function runFacts(db: Database, runId: number): RunFacts {
  const row = db.prepare("SELECT started_at, finished_at, options FROM _runs WHERE run_id = ?").get(runId) as
    | { started_at: string; finished_at: string | null; options: string }
    | undefined;
  if (!row) throw new Error(`run ${runId}: not in this snapshot`);
  const options = JSON.parse(row.options) as { resources?: unknown; claimsWindow?: { from?: unknown; to?: unknown } | null };
  const w = options.claimsWindow;
  const claimsWindow = w && typeof w.from === "string" && typeof w.to === "string" ? { from: w.from, to: w.to } : null;
  const resources = Array.isArray(options.resources) ? options.resources.filter((r): r is string => typeof r === "string") : [];
  return { snapshotId: ensureSnapshotId(db), startedAt: row.started_at, finishedAt: row.finished_at, walked: { resources, claimsWindow } };
}

/**
 * The snapshot's id; one that has none (a file older than the id) gets a random UUID the first
 * time it is needed, kept in `_meta` so every later folder carries the same one.
 */
export function ensureSnapshotId(db: Database): string | null {
  const read = db.prepare("SELECT value FROM _meta WHERE key = 'snapshot_id'").pluck();
  const id = read.get() as string | undefined;
  if (id !== undefined) return id;
  // A snapshot opened read-only (`export`) cannot be given one: its folders say null.
  if (db.readonly) return null;
  db.prepare("INSERT OR IGNORE INTO _meta (key, value) VALUES ('snapshot_id', ?)").run(randomUUID());
  return read.get() as string;
}

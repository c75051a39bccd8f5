/**
 * What a prune leaves behind of the runs it removed (prune.ts): one line per run in
 * `_pruned_runs` (its job, how it ended, when it ran, its counts, the prune that took it), and one
 * per prune in `_prunes`. Enough for every answer to say "run 5 was pruned" instead of "there is
 * no run 5", for the `runs` view to list it as `pruned`, and for a version that began in a pruned
 * run and is still current at the history's start to keep its `observed_at`. A run's history (its
 * closed versions, changes, walk, quarantine and counts per resource) is gone.
 */
import type { Database } from "better-sqlite3";

/** Migration 16's tables (made empty; prune.ts fills them). */
export const PrunedRunsDdl = `
  CREATE TABLE IF NOT EXISTS _prunes (
    prune_id INTEGER PRIMARY KEY AUTOINCREMENT,
    -- The first run kept: the history from it on is whole.
    history_from_run INTEGER NOT NULL,
    bound TEXT NOT NULL,
    started_at TEXT NOT NULL,
    finished_at TEXT,
    runs INTEGER NOT NULL DEFAULT 0,
    versions INTEGER NOT NULL DEFAULT 0,
    bytes_reclaimed INTEGER
  );
  CREATE TABLE IF NOT EXISTS _pruned_runs (
    run_id INTEGER PRIMARY KEY,
    job TEXT NOT NULL,
    -- How the run ended (succeeded or failed): the runs view says 'pruned'.
    status TEXT NOT NULL,
    started_at TEXT NOT NULL,
    finished_at TEXT,
    seen INTEGER, inserted INTEGER, updated INTEGER, deleted INTEGER, unchanged INTEGER, quarantined INTEGER,
    prune_id INTEGER NOT NULL
  );`;

/** A run a prune removed. */
export interface PrunedRun {
  readonly runId: number;
  readonly job: string;
  /** How it ended. */
  readonly status: string;
  readonly startedAt: string;
  /** When the prune that removed it ran. */
  readonly prunedAt: string;
}

const hasTable = (db: Database): boolean => db.prepare("SELECT 1 FROM sqlite_schema WHERE type = 'table' AND name = '_pruned_runs'").get() !== undefined;

/** Run `runId` if a prune removed it. A snapshot from before migration 16 has none. */
export function prunedRun(db: Database, runId: number): PrunedRun | undefined {
  if (!hasTable(db)) return undefined;
  const row = db
    .prepare(
      `SELECT p.run_id AS runId, p.job, p.status, p.started_at AS startedAt, x.started_at AS prunedAt
       FROM _pruned_runs p JOIN _prunes x ON x.prune_id = p.prune_id WHERE p.run_id = ?`,
    )
    .get(runId) as PrunedRun | undefined;
  return row;
}

/** The first run whose history is whole (every run before it was pruned), or undefined when nothing was pruned. */
export function historyFromRun(db: Database): number | undefined {
  if (!hasTable(db)) return undefined;
  const last = db.prepare("SELECT max(run_id) FROM _pruned_runs").pluck().get() as number | null;
  return last === null ? undefined : last + 1;
}

/** The first kept run's start, for messages ("the history starts at run 12, 2026-10-01T02:00:00Z"). */
function firstKept(db: Database): string {
  const row = db.prepare("SELECT run_id, started_at FROM _runs ORDER BY run_id LIMIT 1").get() as { run_id: number; started_at: string } | undefined;
  return row ? `the snapshot's history now starts at run ${row.run_id} (${row.started_at})` : "no run is kept";
}

/**
 * The sentence that says run `runId` was pruned, for an error that asked for it (`what`: how the
 * caller names the request, e.g. "--from 5"). Undefined when the run was not pruned.
 *
 * @example prunedRunMessage(db, 5, "--from 5") // "--from 5: run 5 (sync, 2026-10-01T02:00:00Z) was pruned on 2026-11-28 ..."
 */
export function prunedRunMessage(db: Database, runId: number, what: string): string | undefined {
  const p = prunedRun(db, runId);
  if (!p) return undefined;
  return (
    `${what}: run ${runId} (${p.job}, started ${p.startedAt}) was pruned on ${p.prunedAt.slice(0, 10)} (\`benefits-sync prune\`): ` +
    `its changes and the versions only it saw are gone, and ${firstKept(db)}; give a later run (\`benefits-sync runs\` lists them)`
  );
}

/**
 * For a date that resolves to no kept run: whether the run it would have meant (the last
 * succeeded run on or before it) was pruned, said as a sentence; undefined otherwise.
 */
export function prunedDateMessage(db: Database, day: string, what: string): string | undefined {
  if (!hasTable(db)) return undefined;
  const row = db
    .prepare("SELECT run_id FROM _pruned_runs WHERE status = 'succeeded' AND substr(started_at, 1, 10) <= ? ORDER BY started_at DESC, run_id DESC LIMIT 1")
    .pluck()
    .get(day) as number | undefined;
  if (row === undefined) return undefined;
  return prunedRunMessage(db, row, `${what} (the last run that succeeded on or before ${day} was run ${row})`);
}

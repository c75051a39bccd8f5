/**
 * The runs a delivery carries, as the snapshot recorded them: when each started and finished, how
 * it ended, what it walked (its options: the resources, the claims window) and its counts per
 * resource. A warehouse keeps them beside the data, so that "as of run N" has a date.
 */
import type { Database } from "better-sqlite3";

export interface RunRecord {
  readonly runId: number;
  readonly job: string;
  readonly status: string;
  readonly startedAt: string;
  readonly finishedAt: string | null;
  /** The run's options as recorded (JSON text): `resources`, `claimsWindow`, ... */
  readonly options: string;
  readonly counts: readonly { resource: string; seen: number; inserted: number; updated: number; deleted: number; unchanged: number; quarantined: number }[];
}

export function runRecords(db: Database, runs: readonly number[]): RunRecord[] {
  const run = db.prepare("SELECT run_id, job, status, started_at, finished_at, options FROM _runs WHERE run_id = ?");
  const counts = db.prepare("SELECT resource, seen, inserted, updated, deleted, unchanged, quarantined FROM _run_counts WHERE run_id = ? ORDER BY resource");
  return runs.flatMap((id) => {
    const r = run.get(id) as { run_id: number; job: string; status: string; started_at: string; finished_at: string | null; options: string } | undefined;
    if (!r) return [];
    return [{ runId: r.run_id, job: r.job, status: r.status, startedAt: r.started_at, finishedAt: r.finished_at, options: r.options, counts: counts.all(id) as RunRecord["counts"] }];
  });
}

/**
 * What the run history says of a job, for the scheduler's decisions at start: whether it ever ran,
 * and when it last succeeded (syncs and reports alike, see report-runs.ts).
 */
import type { Database } from "better-sqlite3";
import { jobRunsSource } from "./report-runs.js";

/** When the job last succeeded (the start of its last successful run), or undefined. */
export function lastSuccess(db: Database, job: string): Date | undefined {
  const at = db.prepare(`SELECT MAX(started_at) FROM ${jobRunsSource(db)} WHERE job = ? AND status = 'succeeded'`).pluck().get(job) as string | null;
  return at ? new Date(at) : undefined;
}

/** Whether the job has any run in the history, whatever its outcome. */
export function everRan(db: Database, job: string): boolean {
  return db.prepare(`SELECT 1 FROM ${jobRunsSource(db)} WHERE job = ? LIMIT 1`).get(job) !== undefined;
}

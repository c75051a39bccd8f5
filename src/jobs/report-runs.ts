/**
 * The run history of jobs that are not syncs (the monthly reconciliation): `_report_runs`, one row
 * per run, beside the syncs' `_runs`. Not in `_runs` on purpose: a row there is a state of the
 * service (reconcile periods, as-of queries and the delivery ledger read it as one), and a report
 * changes nothing. Created on first use, so a snapshot never reconciled by a job is unchanged.
 *
 * {@link jobRunsSource} is the one place that reads both, for what asks of any job (the scheduler's
 * decisions at start, `jobs`, the metrics textfile).
 */
import type { Database } from "better-sqlite3";
import { redact } from "../errors.js";

const DDL = `CREATE TABLE IF NOT EXISTS _report_runs (
  report_id INTEGER PRIMARY KEY AUTOINCREMENT,
  job TEXT NOT NULL,
  status TEXT NOT NULL CHECK (status IN ('running', 'succeeded', 'failed')),
  started_at TEXT NOT NULL,
  finished_at TEXT,
  -- The folders written (JSON array of paths), once it succeeded.
  dirs TEXT,
  error TEXT
)`;

/** Record a report run's start; its id. */
export function startReportRun(db: Database, job: string, at: Date): number {
  db.exec(DDL);
  return Number(db.prepare("INSERT INTO _report_runs (job, status, started_at) VALUES (?, 'running', ?)").run(job, at.toISOString()).lastInsertRowid);
}

export function endReportRun(db: Database, id: number, at: Date, outcome: { dirs: readonly string[] } | { error: { code: string; message: string } }): void {
  const [status, dirs, error] = "dirs" in outcome ? ["succeeded", JSON.stringify(outcome.dirs), null] : ["failed", null, redact(`${outcome.error.code}: ${outcome.error.message}`)];
  db.prepare("UPDATE _report_runs SET status = ?, finished_at = ?, dirs = ?, error = ? WHERE report_id = ?").run(status, at.toISOString(), dirs, error, id);
}

/**
 * Every job run, syncs and reports, as an SQL table expression with the columns run_id (a report's
 * is null), job, status, started_at, finished_at, error.
 */
export function jobRunsSource(db: Database): string {
  const syncs = "SELECT run_id, job, status, started_at, finished_at, error FROM _runs";
  const hasReports = db.prepare("SELECT 1 FROM sqlite_master WHERE type = 'table' AND name = '_report_runs'").get() !== undefined;
  return hasReports ? `(${syncs} UNION ALL SELECT NULL, job, status, started_at, finished_at, error FROM _report_runs)` : `(${syncs})`;
}

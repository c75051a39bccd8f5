/**
 * The two ends of a reconciliation: a run id, or a date meaning the last successful run that
 * started on or before it (UTC). Only a succeeded run is a period: a failed or running one holds a
 * partial walk, and figures as of it would mix two states of the service.
 */
import type { Database } from "better-sqlite3";
import { isCalendarDay } from "../calendar-day.js";
import { UsageError } from "../input-errors.js";
import { prunedDateMessage, prunedRunMessage } from "../store/retention/pruned-runs.js";

export interface Period {
  readonly runId: number;
  readonly job: string;
  readonly startedAt: string;
  readonly finishedAt: string;
  /** The run's start date (UTC), YYYY-MM-DD. */
  readonly date: string;
}

interface RunRow {
  run_id: number;
  job: string;
  status: string;
  started_at: string;
  finished_at: string | null;
}

/** Resolve `--from`/`--to` (`flag` names it in errors). A UsageError (exit 2) names what to do. */
export function resolvePeriod(db: Database, spec: string, flag: string): Period {
  const s = spec.trim();
  let row: RunRow | undefined;
  if (/^\d+$/.test(s)) {
    row = db.prepare("SELECT run_id, job, status, started_at, finished_at FROM _runs WHERE run_id = ?").get(Number(s)) as RunRow | undefined;
    if (!row) throw new UsageError([prunedRunMessage(db, Number(s), `${flag} ${s}`) ?? `${flag} ${s}: there is no run ${s} in this snapshot (\`benefits-sync runs\` lists them)`]);
    if (row.status !== "succeeded") {
      throw new UsageError([
        `${flag} ${s}: run ${s} ${row.status === "running" ? "is still running" : "failed"}; its walk is partial, so figures as of it would mix two states of the service. Give a succeeded run (\`benefits-sync runs\`), or a date`,
      ]);
    }
  } else if (isCalendarDay(s)) {
    row = db
      .prepare("SELECT run_id, job, status, started_at, finished_at FROM _runs WHERE status = 'succeeded' AND substr(started_at, 1, 10) <= ? ORDER BY started_at DESC, run_id DESC LIMIT 1")
      .get(s) as RunRow | undefined;
    if (!row) {
      const pruned = prunedDateMessage(db, s, `${flag} ${s}`);
      if (pruned) throw new UsageError([pruned]);
      const first = db.prepare("SELECT started_at FROM _runs WHERE status = 'succeeded' ORDER BY started_at LIMIT 1").pluck().get() as string | undefined;
      throw new UsageError([
        `${flag} ${s}: no run succeeded on or before ${s} (UTC)${first ? `; the first successful run started at ${first}` : "; no run has succeeded yet: run `benefits-sync sync` first"}`,
      ]);
    }
  } else if (/^\d{4}-\d{2}-\d{2}$/.test(s)) {
    throw new UsageError([`${flag} ${s}: not a calendar day (months 01 to 12, days as many as the month has): give a date YYYY-MM-DD, or a run id`]);
  } else {
    throw new UsageError([`${flag} ${JSON.stringify(spec)}: expected a run id (e.g. 7) or a date YYYY-MM-DD (the last successful run on or before it)`]);
  }
  return { runId: row.run_id, job: row.job, startedAt: row.started_at, finishedAt: row.finished_at ?? row.started_at, date: row.started_at.slice(0, 10) };
}

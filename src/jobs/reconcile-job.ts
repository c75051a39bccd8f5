/**
 * The monthly reconciliation as a job (jobs/monthly-reconcile.ts): the snapshot as of last month's
 * first day against this month's first day (the report's as-of date), each day meaning the last
 * successful sync that started on or before it (UTC, as `reconcile --from DATE` reads it), written
 * to `reconcile-YYYY-MM/` (the month reconciled) in each of the job's folder sinks, or beside the
 * snapshot when it has none. Recorded in the report runs (report-runs.ts); never throws for a
 * failed report, as a sync job does not: the report says so. A month that no successful sync
 * precedes (a new install) is "nothing to reconcile yet", a success with no report
 * ({@link ReconcileOutcome.nothingYet}), not a failure that would alert someone every month-start.
 */
import type { Database } from "better-sqlite3";
import { dirname, join, resolve } from "node:path";
import type { Config } from "../config/schema.js";
import { ConfigError } from "../errors.js";
import { configuredOutputs } from "../sinks/outputs.js";
import { openDatabase } from "../store/file/database.js";
import type { Job } from "./job.js";
import { endReportRun, startReportRun } from "./report-runs.js";

/** What the job wrote, for the log and `run`. */
export interface ReconcileOutcome {
  readonly from: string;
  readonly to: string;
  readonly asOf: string;
  readonly dirs: readonly string[];
  readonly arithmeticHolds?: boolean;
  /**
   * Set when there is nothing to reconcile yet: no sync had succeeded by last month's first day (a
   * new install). Not a failure: no report is written, nothing is alerted, and it says when the
   * first report comes.
   */
  readonly nothingYet?: string;
}

export interface ReconcileJobReport {
  readonly runId: number;
  readonly status: "succeeded" | "failed";
  readonly dryRun: false;
  readonly resources: Record<string, never>;
  readonly error?: { readonly code: string; readonly message: string };
  readonly durationMs: number;
  readonly reconcile: ReconcileOutcome;
  readonly deliveries?: undefined;
}

/** The first days of last month and this month (UTC) of `now`, and last month as YYYY-MM. */
export function monthEnds(now: Date): { from: string; to: string; month: string } {
  const first = (y: number, m: number) => new Date(Date.UTC(y, m, 1)).toISOString().slice(0, 10);
  const [y, m] = [now.getUTCFullYear(), now.getUTCMonth()];
  const from = first(y, m - 1);
  return { from, to: first(y, m), month: from.slice(0, 7) };
}

/**
 * Why there is nothing to reconcile as of `from` (no sync succeeded on or before it, UTC, as
 * `reconcile --from DATE` reads it), or undefined when there is something.
 */
function nothingToReconcileYet(db: Database, from: string): string | undefined {
  const first = db.prepare("SELECT min(started_at) FROM _runs WHERE status = 'succeeded'").pluck().get() as string | null;
  if (first !== null && first.slice(0, 10) <= from) return undefined;
  if (first === null) return "no sync has succeeded yet, so no month has a starting point; the first report comes on the 1st of the month after one that began with a successful sync behind it";
  // The first month-start with a successful sync on or before it, and the report that starts there.
  // The 1st of the month after `day`'s (Date.UTC's month counts from 0, so month MM is the next one).
  const nextFirst = (day: string) => new Date(Date.UTC(Number(day.slice(0, 4)), Number(day.slice(5, 7)), 1)).toISOString().slice(0, 10);
  const firstFrom = first.slice(8, 10) === "01" ? first.slice(0, 10) : nextFirst(first);
  return `no sync had succeeded by ${from} (the first succeeded at ${first}), so last month has no starting point; the first report comes on ${nextFirst(firstFrom)}`;
}

export async function runReconcileJob(job: Job, opts: { config: Config; env: Readonly<Record<string, string | undefined>>; cwd: string; now?: Date }): Promise<ReconcileJobReport> {
  const began = Date.now();
  const now = opts.now ?? new Date();
  const { from, to, month } = monthEnds(now);
  const db = openDatabase(opts.config.db);
  const id = startReportRun(db, job.name, now);
  const base = { runId: id, dryRun: false as const, resources: {} };
  try {
    const nothingYet = nothingToReconcileYet(db, from);
    if (nothingYet) {
      endReportRun(db, id, new Date(), { dirs: [] });
      return { ...base, status: "succeeded", durationMs: Date.now() - began, reconcile: { from, to, asOf: to, dirs: [], nothingYet } };
    }
    const named = configuredOutputs(opts.config.sinks, opts.env, opts.cwd);
    const folders = job.sinks.map((n) => named[n]).flatMap((o) => (o?.kind === "folder" ? [o.dir] : []));
    const outs = (folders.length ? folders : [dirname(resolve(opts.cwd, opts.config.db))]).map((d) => join(d, `reconcile-${month}`));
    const { reconcile } = await import("../reports/reconcile.js");
    const { arithmeticLines } = await import("../reports/render.js");
    let holds = true;
    for (const outDir of outs) {
      const report = reconcile(db, { from, to, outDir, asOf: to });
      holds &&= arithmeticLines(report).every((l) => l.holds);
    }
    const outcome: ReconcileOutcome = { from, to, asOf: to, dirs: outs, arithmeticHolds: holds };
    if (!holds) {
      const error = { code: "ARITHMETIC", message: "the report was written, but its arithmetic does not hold: the snapshot's history is inconsistent (see summary.md)" };
      endReportRun(db, id, new Date(), { error });
      return { ...base, status: "failed", error, durationMs: Date.now() - began, reconcile: outcome };
    }
    endReportRun(db, id, new Date(), { dirs: outs });
    return { ...base, status: "succeeded", durationMs: Date.now() - began, reconcile: outcome };
  } catch (e) {
    const message = e instanceof ConfigError ? e.problems.join("; ") : e instanceof Error ? e.message : String(e);
    const error = { code: e instanceof ConfigError ? "CONFIG" : ((e as { code?: string }).code ?? "ERROR"), message };
    endReportRun(db, id, new Date(), { error });
    return { ...base, status: "failed", error, durationMs: Date.now() - began, reconcile: { from, to, asOf: to, dirs: [] } };
  } finally {
    db.close();
  }
}

/**
 * `benefits-sync run JOB`: run one scheduled job now, as the scheduler would (its resources, its
 * window, its sinks, recorded under its name), with the job's textfile and heartbeat. Exit
 * statuses as `sync`: 0, 1, 2, 75 (another run holds the snapshot), 130 and 143 (stopped).
 */
import { redact } from "../../errors.js";
import { openDatabase } from "../../store/file/database.js";
import type { CommandContext } from "../context.js";
import type { ReconcileJobReport } from "../../jobs/reconcile-job.js";
import { notifyRunEnd } from "../run-notify.js";
import { printRunReport, runExitCode, runNotices } from "../run-report.js";
import { progressReporter } from "../progress.js";
import { watchSignals } from "../signals.js";

export async function run(ctx: CommandContext): Promise<number> {
  const config = ctx.config();
  const { effectiveJobs, findJob } = await import("../../jobs/registry.js");
  const jobs = effectiveJobs(config);
  const job = findJob(jobs, String(ctx.options.job));
  const { runJob } = await import("../../jobs/run-job.js");
  const { ping, textfileMetrics, writeTextfile } = await import("../../jobs/telemetry.js");
  const progress = ctx.globals.quiet || ctx.globals.json ? undefined : progressReporter(ctx.stderr);
  const signals = watchSignals();
  try {
    const warn = (m: string) => void ctx.stderr.write(`${m}\n`);
    const notices = runNotices(ctx);
    const pingFailed = (p: string | undefined) => p && warn(`heartbeat: ${redact(p)} (a ping never fails the job; check jobs.${job.name}.heartbeatUrl)`);
    if (job.heartbeatUrl) await ping(job.heartbeatUrl, "start").then(pingFailed);
    const report = await runJob(job, {
      config,
      env: ctx.env,
      cwd: ctx.cwd,
      signal: signals.signal,
      ...(progress ? { onProgress: (p) => progress.update(p) } : {}),
      onNotice: notices.notice,
    });
    progress?.finish();
    (await import("../../jobs/run-outcome.js")).recordRunEnd(job.name, report);
    notices.settle(report);
    if ("reconcile" in report) printReconcileJob(ctx, job.name, report);
    else printRunReport(ctx, report);
    const code = signals.exitCode(runExitCode(report));
    if (job.heartbeatUrl) await ping(job.heartbeatUrl, code === 0 ? "success" : "fail").then(pingFailed);
    await notifyRunEnd(ctx, config, job.name, report);
    if (config.schedule.textfile && report.runId !== null) {
      const db = openDatabase(config.db);
      try {
        writeTextfile(config.schedule.textfile, textfileMetrics(db, jobs));
      } finally {
        db.close();
      }
    }
    return code;
  } finally {
    signals.dispose();
  }
}

/** The reconciliation job's outcome: where the report went, or why there is none. */
function printReconcileJob(ctx: CommandContext, name: string, r: ReconcileJobReport): void {
  const c = r.reconcile;
  if (ctx.globals.json) {
    ctx.stdout.write(`${JSON.stringify({ reportId: r.runId, status: r.status, ...c, ...(r.error ? { error: r.error } : {}), durationMs: r.durationMs })}\n`);
    return;
  }
  if (r.error) ctx.stderr.write(`${name} failed (${r.error.code}): ${redact(r.error.message)}\n`);
  if (r.status === "succeeded" && ctx.globals.quiet) return;
  if (c.nothingYet) ctx.stdout.write(`${name}: nothing to reconcile yet: ${c.nothingYet}\n`);
  for (const d of c.dirs) ctx.stdout.write(`Reconciliation of ${c.from} with ${c.to} (as of ${c.asOf}): ${d}/report.html (and summary.md, report.json, CSV files)\n`);
}

/**
 * `benefits-sync run JOB`: run one scheduled job now, as the scheduler would (its resources, its
 * window, its sinks, recorded under its name), with the job's textfile and heartbeat. Exit
 * statuses as `sync`: 0, 1, 2, 75 (another run holds the snapshot), 130 and 143 (stopped).
 */
import { openDatabase } from "../../store/database.js";
import type { CommandContext } from "../context.js";
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
    if (job.heartbeatUrl) await ping(job.heartbeatUrl, "start").then((p) => p && warn(`heartbeat: ${p}`));
    const report = await runJob(job, {
      config,
      env: ctx.env,
      cwd: ctx.cwd,
      signal: signals.signal,
      ...(progress ? { onProgress: (p) => progress.update(p) } : {}),
      onNotice: notices.notice,
    });
    progress?.finish();
    notices.settle(report);
    printRunReport(ctx, report);
    const code = signals.exitCode(runExitCode(report));
    if (job.heartbeatUrl) await ping(job.heartbeatUrl, code === 0 ? "success" : "fail").then((p) => p && warn(`heartbeat: ${p}`));
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

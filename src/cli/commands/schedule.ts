/**
 * `benefits-sync schedule`: run the enabled jobs on their schedules until stopped (see
 * src/jobs/scheduler.ts). Logs one JSON object per line on stdout. SIGINT or SIGTERM: no new fire,
 * the run in progress is recorded as interrupted, exit 130 or 143.
 */
import { openDatabase } from "../../store/file/database.js";
import type { CommandContext } from "../context.js";
import { ExitCode } from "../exit-codes.js";

export async function run(ctx: CommandContext): Promise<number> {
  const config = ctx.config();
  const { effectiveJobs } = await import("../../jobs/registry.js");
  const jobs = effectiveJobs(config);
  const { runJob } = await import("../../jobs/run-job.js");
  const { Scheduler } = await import("../../jobs/scheduler.js");
  const { jsonLines } = await import("../../jobs/telemetry.js");
  const { recordJobRun } = await import("../../telemetry/otel-metrics.js");
  const notifyUrl = (await import("../../jobs/notify.js")).notifyUrl(config.notify, ctx.env);
  // Creates the snapshot (with its schema) when missing: fires are claimed in it.
  const db = openDatabase(config.db);
  const log = jsonLines(ctx.stdout);
  const metrics = ctx.options.metricsPort !== undefined ? (await import("../../jobs/scheduler-metrics.js")).schedulerRegistry(db, jobs) : undefined;
  // schedule.retention: a prune after each successful sync (jobs/retention.ts), held back by what the
  // config and the ledger still need, on its own thread: `/metrics` and the signals answer meanwhile.
  const retention = config.schedule.retention
    ? { retain: (await import("../../jobs/retention.js")).retainOffThread, holders: await (await import("./prune.js")).pruneHolders(config, ctx.env, ctx.cwd) }
    : undefined;
  const scheduler = new Scheduler({
    jobs,
    db,
    log,
    waitForSnapshotMs: config.schedule.waitForSnapshotMs,
    runMissed: ctx.options.runMissed === true,
    ...(config.schedule.textfile ? { textfile: config.schedule.textfile } : {}),
    ...(notifyUrl ? { notifyUrl } : {}),
    // Each run's end to `GET /metrics` (when served) and to OpenTelemetry (a no-op unless started).
    onOutcome: (job, outcome, seconds) => {
      metrics?.onOutcome(job, outcome, seconds);
      recordJobRun(job, outcome, seconds);
    },
    ...(retention ? { retain: () => retention.retain(config.db, config.schedule.retention!, retention.holders) } : {}),
    run: (job, signal) => runJob(job, { config, env: ctx.env, cwd: ctx.cwd, signal, onNotice: (message) => log({ event: "job.notice", job: job.name, message }) }),
  });
  const stopped = new Promise<NodeJS.Signals>((resolve) => {
    process.once("SIGINT", () => resolve("SIGINT"));
    process.once("SIGTERM", () => resolve("SIGTERM"));
  });
  try {
    if (scheduler.enabled.length === 0) {
      ctx.stderr.write("No job is enabled (see `benefits-sync jobs`, and `jobs` in the config file): nothing to schedule.\n");
      return ExitCode.USAGE;
    }
    const { serveMetrics } = await import("../../metrics/endpoint.js");
    const endpoint = metrics ? await serveMetrics(metrics.registry, { port: ctx.options.metricsPort as number, host: ctx.options.metricsHost as string | undefined }) : undefined;
    if (endpoint) log({ event: "scheduler.metrics", url: endpoint.url });
    await scheduler.start();
    const sig = await stopped;
    await scheduler.stop(`stopped by ${sig}`);
    await endpoint?.close();
    return sig === "SIGINT" ? ExitCode.SIGINT : ExitCode.SIGTERM;
  } finally {
    db.close();
  }
}


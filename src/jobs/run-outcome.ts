/**
 * How a job's run ended, in the one word the run counter (`benefits_sync_job_runs_total`), the
 * scheduler's fire record and its log all use: a delivery that failed fails the fire, even though
 * the run itself stays succeeded (the next run delivers what is pending).
 */
import type { RunOutcome } from "../metrics/families.js";
import { recordJobRun } from "../telemetry/otel-metrics.js";
import type { JobReport } from "./run-job.js";

/** @example runOutcome(await runJob(job, opts)) // "succeeded" */
export function runOutcome(report: JobReport): RunOutcome {
  if (report.status === "busy") return "busy";
  if (report.error?.code === "INTERRUPTED") return "interrupted";
  const deliveryFailed = report.deliveries?.some((d) => d.outcome.status === "failed") ?? false;
  return report.status === "succeeded" && !deliveryFailed ? "succeeded" : "failed";
}

/**
 * A run of `sync` or `run JOB` to OpenTelemetry's run counter and histogram, as the scheduler
 * tells its own (`onOutcome`); the API's no-op unless the CLI started the SDK.
 */
export function recordRunEnd(job: string, report: JobReport): void {
  recordJobRun(job, runOutcome(report), report.durationMs / 1000);
}

/**
 * One job, run now: a sync of the job's resources, recorded under the job's name, its changes
 * delivered to the job's sinks. The claims window is the rolling one, computed once from the
 * run's start (a run that crosses midnight keeps one window). Used by `benefits-sync run JOB` and
 * by the scheduler; never throws for a failed run (the report says so).
 */
import type { Config } from "../config/schema.js";
import { rollingWindow } from "../extract/scopes.js";
import { runSyncJob, type SyncJobOptions } from "../pipeline/run-sync-job.js";
import { configuredOutputs } from "../sinks/outputs.js";
import type { Job } from "./job.js";
import { runReconcileJob, type ReconcileJobReport } from "./reconcile-job.js";

export interface RunJobOptions {
  readonly config: Config;
  readonly env: Readonly<Record<string, string | undefined>>;
  readonly cwd: string;
  readonly signal?: AbortSignal;
  readonly onProgress?: SyncJobOptions["onProgress"];
  readonly onNotice?: (message: string) => void;
  /** The run's start (tests); the claims window ends on its day. */
  readonly now?: Date;
  readonly service?: SyncJobOptions["service"];
}

/** A sync's report; the reconciliation job's has `reconcile` (what it wrote) and no resources. */
export type JobReport = Awaited<ReturnType<typeof runSyncJob>> | ReconcileJobReport;

export async function runJob(job: Job, opts: RunJobOptions): Promise<JobReport> {
  if (job.kind === "reconcile") return runReconcileJob(job, { config: opts.config, env: opts.env, cwd: opts.cwd, ...(opts.now ? { now: opts.now } : {}) });
  const named = configuredOutputs(opts.config.sinks, opts.env, opts.cwd);
  const outputs = job.sinks.map((n) => named[n]!).filter((o) => o !== undefined);
  const window =
    job.claimsLookbackDays !== undefined && job.resources.includes("claims") ? rollingWindow(opts.now ?? new Date(), job.claimsLookbackDays) : undefined;
  return runSyncJob({
    config: opts.config,
    job: job.name,
    resources: job.resources,
    ...(window ? { claimsSince: window.from, claimsUntil: window.to } : {}),
    ...(opts.now ? { today: opts.now } : {}),
    ...(outputs.length ? { outputs } : {}),
    ...(opts.signal ? { signal: opts.signal } : {}),
    ...(opts.onProgress ? { onProgress: opts.onProgress } : {}),
    ...(opts.onNotice ? { onNotice: opts.onNotice } : {}),
    ...(opts.service ? { service: opts.service } : {}),
  });
}

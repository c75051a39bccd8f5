/**
 * The counters and histograms benefits-sync measures, defined once: `GET /metrics` (prom-client,
 * scheduler-metrics.ts and receiver-metrics.ts) and OpenTelemetry (telemetry/otel-metrics.ts)
 * make their instruments from these, under the same names, labels and buckets, so a dashboard
 * reads either. The receiver's counters are in webhooks/counters.ts, beside what they count.
 */

export interface Family {
  /** The full name, as `GET /metrics` shows it. */
  readonly name: string;
  readonly help: string;
  /** The UCUM unit OpenTelemetry is told (`s`, or an annotation such as `{run}`). */
  readonly unit: string;
  readonly labelNames: readonly string[];
}

export interface HistogramFamily extends Family {
  readonly buckets: readonly number[];
}

/** Buckets of a job's run, in seconds: a webhook drain takes a second, a first sync of a million members minutes. */
const RunBuckets = [1, 5, 15, 30, 60, 120, 300, 600, 1200, 1800, 3600, 7200];

/** Buckets of a request or an inbox commit, in seconds: a group commit's window is 2 ms, an fsync a few ms. */
const LatencyBuckets = [0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10];

/** How a job's run ended: the `outcome` label of {@link JobRuns} (jobs/run-outcome.ts decides it). */
export const RunOutcomes = ["succeeded", "failed", "interrupted", "busy"] as const;
export type RunOutcome = (typeof RunOutcomes)[number];

export const JobRuns: Family = {
  name: "benefits_sync_job_runs_total",
  help: "Fires of each job since the scheduler started, by how they ended (succeeded, failed, interrupted, busy: skipped while another run held the snapshot).",
  unit: "{run}",
  labelNames: ["job", "outcome"],
};

export const JobRunDuration: HistogramFamily = {
  name: "benefits_sync_job_run_duration_seconds",
  help: "How long each run of a job took, since the scheduler started.",
  unit: "s",
  labelNames: ["job"],
  buckets: RunBuckets,
};

export const WebhookRequestDuration: HistogramFamily = {
  name: "benefits_sync_webhooks_request_duration_seconds",
  help: "Requests to the receiver, from their head to the last byte of the answer, by endpoint (webhook, healthz, other) and HTTP status.",
  unit: "s",
  labelNames: ["endpoint", "status"],
  buckets: LatencyBuckets,
};

export const WebhookAcceptDuration: HistogramFamily = {
  name: "benefits_sync_webhooks_inbox_accept_duration_seconds",
  help: "An event handed to the inbox until its commit is durable (the answer's 2xx waits for it).",
  unit: "s",
  labelNames: [],
  buckets: LatencyBuckets,
};

export const WebhookApplyLag: HistogramFamily = {
  name: "benefits_sync_webhooks_apply_lag_seconds",
  help: "For each member applied to the snapshot, the time since the oldest of its events was received.",
  unit: "s",
  labelNames: [],
  buckets: [0.1, 0.5, 1, 2.5, 5, 10, 30, 60, 300, 900, 3600, 21600, 86400],
};

/** A family as prom-client's constructors take it. */
export function promOf(f: Family | HistogramFamily): { name: string; help: string; labelNames: string[]; buckets?: number[] } {
  return { name: f.name, help: f.help, labelNames: [...f.labelNames], ...("buckets" in f ? { buckets: [...f.buckets] } : {}) };
}

/**
 * The metrics OpenTelemetry exports: the same families `GET /metrics` serves (metrics/families.ts,
 * webhooks/counters.ts, whose receiver-otel.ts observes them here), under the same names, labels (as attributes) and buckets, through the
 * global meter. Without an SDK registered the meter is the API's no-op, and so is everything here.
 *
 * Instruments are made per meter provider, when first used: the API has no proxy for meters, so
 * an instrument made before the CLI registered its provider would stay a no-op.
 */
import { metrics, type Counter, type Histogram, type Meter, type MeterProvider } from "@opentelemetry/api";
import { JobRunDuration, JobRuns, WebhookApplyLag, type Family, type HistogramFamily, type RunOutcome } from "../metrics/families.js";

interface Instruments {
  readonly meter: Meter;
  readonly runs: Counter;
  readonly histograms: Map<string, Histogram>;
}

const made = new WeakMap<MeterProvider, Instruments>();

function instruments(): Instruments {
  const provider = metrics.getMeterProvider();
  let i = made.get(provider);
  if (!i) {
    const meter = provider.getMeter("benefits-sync");
    i = { meter, runs: counter(meter, JobRuns), histograms: new Map() };
    made.set(provider, i);
  }
  return i;
}

/** The meter of this command's provider (the API's no-op without an SDK). */
export const otelMeter = (): Meter => instruments().meter;

const counter = (meter: Meter, f: Family): Counter => meter.createCounter(f.name, { description: f.help, unit: f.unit });

/** The histogram of family `f` on this command's meter provider, made when first used. */
export function histogram(f: HistogramFamily): Histogram {
  const i = instruments();
  let h = i.histograms.get(f.name);
  if (!h) {
    h = i.meter.createHistogram(f.name, { description: f.help, unit: f.unit, advice: { explicitBucketBoundaries: [...f.buckets] } });
    i.histograms.set(f.name, h);
  }
  return h;
}

/**
 * A job's run ended: `benefits_sync_job_runs_total` by job and outcome, and its duration unless
 * it did not run (busy), as the scheduler's `GET /metrics` counts them.
 *
 * @example recordJobRun("sync", "succeeded", 12.5);
 */
export function recordJobRun(job: string, outcome: RunOutcome, seconds: number): void {
  instruments().runs.add(1, { job, outcome });
  if (outcome !== "busy") histogram(JobRunDuration).record(seconds, { job });
}

/** A member applied by the webhook worker, `seconds` after the oldest of its events was received. */
export function recordApplyLag(seconds: number): void {
  histogram(WebhookApplyLag).record(seconds);
}

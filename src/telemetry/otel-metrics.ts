/**
 * The metrics OpenTelemetry exports: the same families `GET /metrics` serves (metrics/families.ts,
 * webhooks/counters.ts), under the same names, labels (as attributes) and buckets, through the
 * global meter. Without an SDK registered the meter is the API's no-op, and so is everything here.
 *
 * Instruments are made per meter provider, when first used: the API has no proxy for meters, so
 * an instrument made before the CLI registered its provider would stay a no-op.
 */
import { metrics, type Counter, type Histogram, type Meter, type MeterProvider } from "@opentelemetry/api";
import { JobRunDuration, JobRuns, WebhookAcceptDuration, WebhookApplyLag, WebhookRequestDuration, type Family, type HistogramFamily, type RunOutcome } from "../metrics/families.js";
import { RECEIVER_COUNTERS, type ReceiverCounters } from "../webhooks/counters.js";
import type { ReceiverTimings } from "../webhooks/receiver-metrics.js";

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

const counter = (meter: Meter, f: Family): Counter => meter.createCounter(f.name, { description: f.help, unit: f.unit });

function histogram(f: HistogramFamily): Histogram {
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

/**
 * The receiver's counters, observed at each export (the last one at exit included: they are not
 * unobserved when the receiver stops), and the timings its server reports. Observed on the meter
 * provider of this command: the next command's provider starts with none.
 */
export function receiverInstruments(c: ReceiverCounters): { timings: ReceiverTimings } {
  const { meter } = instruments();
  for (const f of RECEIVER_COUNTERS) {
    meter.createObservableCounter(`benefits_sync_${f.name}`, { description: f.help, unit: f.unit }).addCallback((result) => {
      for (const [labels, v] of f.samples(c)) result.observe(v, { ...labels });
    });
  }
  return {
    timings: {
      request: (endpoint, status, seconds) => histogram(WebhookRequestDuration).record(seconds, { endpoint, status: String(status) }),
      accept: (seconds) => histogram(WebhookAcceptDuration).record(seconds),
    },
  };
}

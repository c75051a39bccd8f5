/**
 * The receiver's counters and timings through OpenTelemetry (telemetry/otel-metrics.ts has the
 * meter): the families `GET /metrics` serves (counters.ts), under the same names.
 */
import { WebhookAcceptDuration, WebhookRequestDuration } from "../metrics/families.js";
import { histogram, otelMeter } from "../telemetry/otel-metrics.js";
import { RECEIVER_COUNTERS, type ReceiverCounters } from "./counters.js";
import type { ReceiverTimings } from "./receiver-metrics.js";

/**
 * The receiver's counters, observed at each export (the last one at exit included: they are not
 * unobserved when the receiver stops), and the timings its server reports. Observed on the meter
 * provider of this command: the next command's provider starts with none.
 */
export function receiverInstruments(c: ReceiverCounters): { timings: ReceiverTimings } {
  const meter = otelMeter();
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

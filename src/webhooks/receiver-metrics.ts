/**
 * The receiver's metrics for `GET /metrics` (prom-client): the counters its textfile carries
 * (counters.ts, read when scraped, so the two never disagree) and how long things take, as
 * histograms in seconds. Labels hold fixed words only (an endpoint, a status code, a reason, a
 * secret's position): never an id of a person or an event. docs/metrics.md lists them.
 */
import { Counter, Histogram, Registry } from "prom-client";
import { RECEIVER_COUNTERS, type ReceiverCounterFamily, type ReceiverCounters } from "./counters.js";
import { promOf, WebhookAcceptDuration, WebhookApplyLag, WebhookRequestDuration } from "../metrics/families.js";

/** What the server tells the metrics as it answers (server.ts). */
export interface ReceiverTimings {
  /** A request answered: its endpoint, HTTP status and seconds from its head to the last byte of the answer. */
  request(endpoint: ReceiverEndpoint, status: number, seconds: number): void;
  /** An event handed to the inbox until its commit is durable (the 2xx waits for it). */
  accept(seconds: number): void;
}

export type ReceiverEndpoint = "webhook" | "healthz" | "other";

/** A counter whose value is read from the receiver's own counters when scraped. */
function mirrored(registry: Registry, c: ReceiverCounters, f: ReceiverCounterFamily): void {
  new Counter({
    name: `benefits_sync_${f.name}`,
    help: f.help,
    labelNames: [...f.labelNames],
    registers: [registry],
    collect() {
      this.reset();
      for (const [labels, v] of f.samples(c)) this.inc(labels, v);
    },
  });
}

/** A registry of the receiver's metrics, and the timings its server reports to. */
export function receiverRegistry(c: ReceiverCounters): { registry: Registry; timings: ReceiverTimings; applyLag: (seconds: number) => void } {
  const registry = new Registry();
  for (const f of RECEIVER_COUNTERS) mirrored(registry, c, f);
  const requests = new Histogram({ ...promOf(WebhookRequestDuration), registers: [registry] });
  const accepts = new Histogram({ ...promOf(WebhookAcceptDuration), registers: [registry] });
  const lag = new Histogram({ ...promOf(WebhookApplyLag), registers: [registry] });
  return {
    registry,
    applyLag: (seconds) => lag.observe(seconds),
    timings: {
      request: (endpoint, status, seconds) => requests.observe({ endpoint, status: String(status) }, seconds),
      accept: (seconds) => accepts.observe(seconds),
    },
  };
}

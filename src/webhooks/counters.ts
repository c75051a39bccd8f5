/**
 * The receiver's counters, since it started: what arrived, what was stored, what was refused and
 * why, and which secret of a rotation matched (the evidence to retire the old one). Written as a
 * Prometheus textfile of their own (see {@link receiverTextfileFor}) beside the scheduler's.
 */
import { metric, label } from "../prometheus-text.js";

export const REJECT_REASONS = ["missing_signature", "bad_signature", "unauthorized", "too_large", "bad_request", "method_not_allowed", "not_found", "unavailable"] as const;
export type RejectReason = (typeof REJECT_REASONS)[number];

export class ReceiverCounters {
  /** Deliveries to the webhook path (any answer). */
  received = 0;
  /** New events stored (a 2xx). */
  accepted = 0;
  /** Repeated event ids (a 2xx, nothing stored twice). */
  duplicates = 0;
  /** New events of another type than member_update: stored as ignored (a 2xx). */
  ignored = 0;
  /** Inbox commits (one per group of events). */
  commits = 0;
  readonly rejected: Record<RejectReason, number> = Object.fromEntries(REJECT_REASONS.map((r) => [r, 0])) as Record<RejectReason, number>;
  readonly secretMatched: number[];

  constructor(secrets: number) {
    this.secretMatched = new Array<number>(secrets).fill(0);
  }
}

/**
 * The textfile of the receiver: `benefits-sync.prom` → `benefits-sync-webhooks.prom` in the same
 * folder, so the scheduler's file and this one never overwrite each other.
 *
 * @example receiverTextfileFor("/var/lib/node_exporter/benefits-sync.prom") // ".../benefits-sync-webhooks.prom"
 */
export function receiverTextfileFor(textfile: string): string {
  return textfile.replace(/(\.prom)?$/, "-webhooks.prom");
}

/** A counter of the receiver: its name without `benefits_sync_`, and its samples read from the counters. */
export interface ReceiverCounterFamily {
  readonly name: string;
  readonly help: string;
  /** The UCUM annotation OpenTelemetry is told. */
  readonly unit: string;
  readonly labelNames: readonly string[];
  samples(c: ReceiverCounters): [Readonly<Record<string, string>>, number][];
}

/**
 * The receiver's counters, once for the textfile, `GET /metrics` (receiver-metrics.ts) and
 * OpenTelemetry (telemetry/otel-metrics.ts), all read from the same {@link ReceiverCounters}.
 */
export const RECEIVER_COUNTERS: readonly ReceiverCounterFamily[] = [
  { name: "webhooks_received_total", help: "Deliveries to the webhook path since the receiver started.", unit: "{delivery}", labelNames: [], samples: (c) => [[{}, c.received]] },
  { name: "webhooks_accepted_total", help: "New events stored durably (answered 2xx).", unit: "{event}", labelNames: [], samples: (c) => [[{}, c.accepted]] },
  { name: "webhooks_duplicates_total", help: "Deliveries of an event id already stored (answered 2xx, stored once).", unit: "{delivery}", labelNames: [], samples: (c) => [[{}, c.duplicates]] },
  { name: "webhooks_ignored_total", help: "New events of a type the receiver does not act on (stored, answered 2xx).", unit: "{event}", labelNames: [], samples: (c) => [[{}, c.ignored]] },
  { name: "webhooks_rejected_total", help: "Deliveries refused, by reason.", unit: "{delivery}", labelNames: ["reason"], samples: (c) => REJECT_REASONS.map((r) => [{ reason: r }, c.rejected[r]]) },
  {
    name: "webhooks_secret_matched_total",
    help: "Signatures verified, by the position of the secret that matched (0 = the first of BENEFITS_WEBHOOK_SECRET).",
    unit: "{signature}",
    labelNames: ["secret"],
    samples: (c) => c.secretMatched.map((n, i) => [{ secret: String(i) }, n]),
  },
  { name: "webhooks_inbox_commits_total", help: "Inbox commits (each one fsync for a group of events).", unit: "{commit}", labelNames: [], samples: (c) => [[{}, c.commits]] },
];

/** The counters as Prometheus text. */
export function receiverMetrics(c: ReceiverCounters): string {
  return RECEIVER_COUNTERS.map(
    (f) =>
      metric(f.name, f.help, "counter") +
      f
        .samples(c)
        .map(([labels, v]) => {
          const shown = Object.entries(labels).map(([k, x]) => `${k}="${label(x)}"`).join(",");
          return `benefits_sync_${f.name}${shown ? `{${shown}}` : ""} ${v}\n`;
        })
        .join(""),
  ).join("");
}

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

const counter = (name: string, help: string, samples: [string, number][]) =>
  metric(name, help, "counter") + samples.map(([labels, v]) => `benefits_sync_${name}${labels ? `{${labels}}` : ""} ${v}\n`).join("");

/** The counters as Prometheus text. */
export function receiverMetrics(c: ReceiverCounters): string {
  return [
    counter("webhooks_received_total", "Deliveries to the webhook path since the receiver started.", [["", c.received]]),
    counter("webhooks_accepted_total", "New events stored durably (answered 2xx).", [["", c.accepted]]),
    counter("webhooks_duplicates_total", "Deliveries of an event id already stored (answered 2xx, stored once).", [["", c.duplicates]]),
    counter("webhooks_ignored_total", "New events of a type the receiver does not act on (stored, answered 2xx).", [["", c.ignored]]),
    counter("webhooks_rejected_total", "Deliveries refused, by reason.", REJECT_REASONS.map((r) => [`reason="${r}"`, c.rejected[r]])),
    counter("webhooks_secret_matched_total", "Signatures verified, by the position of the secret that matched (0 = the first of BENEFITS_WEBHOOK_SECRET).", c.secretMatched.map((n, i) => [`secret="${label(String(i))}"`, n])),
    counter("webhooks_inbox_commits_total", "Inbox commits (each one fsync for a group of events).", [["", c.commits]]),
  ].join("");
}

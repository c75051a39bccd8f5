/**
 * The worker beside the receiver (`webhooks serve`): a drain every second until the signal aborts,
 * each outcome logged once (a repeated problem is not logged again).
 */
import { redact } from "../errors.js";
import type { ApplyJobReport } from "./apply-job.js";

export type LogLine = (o: { event: string } & Record<string, unknown>) => void;

export interface ApplyLoopOptions {
  /** One drain (applyWebhooksOnce with the configuration). */
  readonly drain: (signal: AbortSignal) => Promise<ApplyJobReport>;
  readonly signal: AbortSignal;
  readonly log: LogLine;
  /** How long the worker rests between drains (milliseconds). */
  readonly everyMs?: number;
}

/**
 * Drain, rest, drain... until `signal` aborts; resolves once the drain in hand is done.
 *
 * @example await applyLoop({ drain: (signal) => applyWebhooksOnce(config, { signal }), signal, log });
 */
export async function applyLoop(opts: ApplyLoopOptions): Promise<void> {
  const { signal, log } = opts;
  let last = "";
  const once = (key: string, entry: { event: string } & Record<string, unknown>) => {
    if (key !== last) log(entry);
    last = key;
  };
  while (!signal.aborted) {
    try {
      const r = await opts.drain(signal);
      if (r.runs.length > 0 || r.parked > 0) {
        log({ event: "webhooks.applied", runs: r.runs.map((x) => x.runId), applied: r.applied, notFound: r.notFound, retrying: r.retrying, parked: r.parked, pending: r.pendingAfter });
        last = "";
      }
      if (r.busy) once(`busy ${r.busy.code}`, { event: "webhooks.waiting", why: redact(r.busy.message), pending: r.pendingAfter });
      else if (r.error) once(`error ${r.error.code}`, { event: "webhooks.apply_failed", code: r.error.code, message: redact(r.error.message), pending: r.pendingAfter });
      else if (r.runs.length === 0) last = "";
    } catch (e) {
      const message = redact(e instanceof Error ? e.message : String(e));
      once(`throw ${message}`, { event: "webhooks.apply_failed", code: (e as { code?: string }).code ?? "ERROR", message });
    }
    await rest(opts.everyMs ?? 1000, signal);
  }
}

/** Wait `ms`, or less when `signal` aborts; either way its abort listener is gone when it resolves. */
function rest(ms: number, signal: AbortSignal): Promise<void> {
  return new Promise<void>((resolve) => {
    const done = () => {
      clearTimeout(t);
      signal.removeEventListener("abort", done);
      resolve();
    };
    const t = setTimeout(done, ms);
    signal.addEventListener("abort", done, { once: true });
  });
}

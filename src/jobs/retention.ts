/**
 * The scheduler's history retention (`schedule.retention` in the config): after each sync job
 * that succeeded, the same prune as `benefits-sync prune --keep-runs N` (or `--before` the day
 * `keepDays` ago, UTC). A prune that is held back (an output that has not received a run, the
 * reconciliation's next report) or fails is a log line, never a failed job: the sync succeeded,
 * and the next one tries again.
 */
import type { Database } from "better-sqlite3";
import { redact } from "../errors.js";
import type { KnownOutput, PruneBound } from "../store/prune-plan.js";
import { prune, PruneHeldError } from "../store/prune.js";
import type { LogEvent } from "./telemetry.js";

export interface Retention {
  readonly keepRuns?: number | undefined;
  readonly keepDays?: number | undefined;
}

/** The bound a retention setting means at `now`. */
export function retentionBound(r: Retention, now: Date): PruneBound {
  if (r.keepRuns !== undefined) return { keepRuns: r.keepRuns };
  return { before: new Date(now.getTime() - r.keepDays! * 86_400_000).toISOString().slice(0, 10) };
}

/** Prune `db` by `r`; the line that says how it went (`retention.pruned`, `.nothing`, `.held`, `.failed`). */
export function retain(db: Database, r: Retention, holders: { outputs: readonly KnownOutput[]; reconcileJobs: readonly string[] }, now: () => Date = () => new Date()): LogEvent {
  const bound = retentionBound(r, now());
  try {
    const res = prune(db, bound, { ...holders, now });
    const versions = Object.values(res.versionsRemoved).reduce((a, b) => a + b, 0);
    if (res.runsRemoved + versions === 0) return { event: "retention.nothing", bound: res.plan.boundText };
    return {
      event: "retention.pruned",
      bound: res.plan.boundText,
      historyFromRun: res.plan.keepFrom,
      runs: res.runsRemoved,
      versions,
      bytesReclaimed: Math.max(0, res.bytesBefore - res.bytesAfter),
    };
  } catch (e) {
    if (e instanceof PruneHeldError) return { event: "retention.held", bound: e.plan.boundText, holds: e.plan.holds.map((h) => ({ kind: h.kind, name: h.name, needsRun: h.needsRun, why: h.why })) };
    return { event: "retention.failed", bound: "keepRuns" in bound ? `--keep-runs ${bound.keepRuns}` : `--before ${bound.before}`, error: redact(e instanceof Error ? e.message : String(e)) };
  }
}

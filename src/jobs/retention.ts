/**
 * The scheduler's history retention (`schedule.retention` in the config): after each sync job
 * that succeeded, the same prune as `benefits-sync prune --keep-runs N` (or `--before` the day
 * `keepDays` ago, UTC). A prune that is held back (an output that has not received a run, the
 * reconciliation's next report) or fails is a log line, never a failed job: the sync succeeded,
 * and the next one tries again. The scheduler prunes on a worker thread (`retainOffThread`), so
 * that it keeps answering `/metrics` and its signals while a prune works.
 */
import type { Database } from "better-sqlite3";
import { Worker } from "node:worker_threads";
import { redact } from "../errors.js";
import { workerScript } from "../worker-script.js";
import type { KnownOutput, PruneBound } from "../store/retention/prune-plan.js";
import { prune, PruneHeldError } from "../store/retention/prune.js";
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

export interface RetentionHolders {
  readonly outputs: readonly KnownOutput[];
  readonly reconcileJobs: readonly string[];
}

/** Prune `db` by `r`; the line that says how it went (`retention.pruned`, `.nothing`, `.held`, `.failed`). */
export function retain(db: Database, r: Retention, holders: RetentionHolders, now: () => Date = () => new Date(), onProgress?: (step: string) => void): LogEvent {
  const bound = retentionBound(r, now());
  try {
    const res = prune(db, bound, { ...holders, now, ...(onProgress ? { onProgress } : {}) });
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
    return failedLine(bound, e instanceof Error ? e.message : String(e));
  }
}

/** The line of a retention that failed (`retention.failed`), its error redacted. */
export function failedLine(bound: PruneBound, why: string): LogEvent {
  return { event: "retention.failed", bound: "keepRuns" in bound ? `--keep-runs ${bound.keepRuns}` : `--before ${bound.before}`, error: redact(why) };
}

/** What the retention thread (retention-worker.ts) is given. */
export interface RetentionWorkerInit {
  readonly dbPath: string;
  readonly retention: Retention;
  readonly holders: RetentionHolders;
  /** Tests: an Int32Array's buffer; the thread waits at the prune's first step done until its first cell is not 0 (and notified). */
  readonly gate?: SharedArrayBuffer;
}

/**
 * {@link retain} on its own thread and connection: the caller's event loop goes on while it
 * prunes. `onProgress` hears the prune's first step done (the thread waits there on `gate`, tests).
 */
export function retainOffThread(dbPath: string, r: Retention, holders: RetentionHolders, hooks: { onProgress?: (step: string) => void; gate?: SharedArrayBuffer } = {}): Promise<LogEvent> {
  const init: RetentionWorkerInit = { dbPath, retention: r, holders, ...(hooks.gate ? { gate: hooks.gate } : {}) };
  return new Promise((resolve) => {
    let line: LogEvent | undefined;
    const failed = (why: string): LogEvent => failedLine(retentionBound(r, new Date()), why);
    const worker = new Worker(workerScript(import.meta.url, "./retention-worker.js"), { workerData: init });
    worker.on("message", (m: { progress: string } | { line: LogEvent }) => {
      if ("progress" in m) hooks.onProgress?.(m.progress);
      else line = m.line;
    });
    worker.on("error", (e) => {
      line ??= failed(e.message);
    });
    worker.on("exit", (code) => resolve(line ?? failed(`the retention thread stopped (exit ${code}) before it answered`)));
  });
}

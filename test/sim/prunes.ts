/**
 * Prunes among a schedule's steps (src/store/retention/prune.ts): after a run, from the run's own stream
 * (label 6000 + run index, so the schedule's other draws are unchanged), a prune to `--keep-runs
 * 1..3` or `--before` a day of the simulated clock, sometimes with the monthly reconciliation
 * configured, sometimes stopped between two of its steps (its progress callback throws, as a
 * process killed there: each step is its own transaction), in small batches so that it has several.
 *
 * What each must show:
 * - `prune-lost-kept`: as of every run it keeps, the versions seen, the run's changes and the
 *   current versions are what they were before (finished, stopped or held);
 * - `prune-held-changed`: a held prune changed nothing, and each output it named lacks that run;
 * - `prune-undelivered`: a run removed had reached each output whole (every change it recorded);
 * - `prune-left-history`: a finished prune left no version that ended before the first run kept;
 * - `prune-integrity`: SQLite's integrity check.
 */
import type { Database } from "better-sqlite3";
import { planPrune, type PruneBound } from "../../src/store/retention/prune-plan.js";
import { prune, PruneHeldError } from "../../src/store/retention/prune.js";
import { StoredResources } from "../../src/store/schema/resources.js";
import type { DeliveryLog } from "./deliveries.js";
import type { Violation } from "./invariants.js";
import { Rng } from "./rng.js";

export interface PruneStep {
  readonly bound: PruneBound;
  readonly reconcile: boolean;
  readonly batch: number;
  /** Stop after this many progress steps (undefined: let it finish). */
  readonly stopAfter?: number;
}

/** The prune after run #index, if there is one. */
export function drawPrune(seed: number, index: number, dayMs: number, now: Date): PruneStep | undefined {
  const rng = Rng.derive(seed, 6000 + index);
  if (!rng.chance(0.35)) return undefined;
  const bound: PruneBound = rng.chance(0.7) ? { keepRuns: rng.between(1, 3) } : { before: new Date(now.getTime() - rng.between(0, 3) * dayMs).toISOString().slice(0, 10) };
  const reconcile = rng.chance(0.3);
  const batch = rng.pick([1, 3, 20_000]);
  return { bound, reconcile, batch, ...(rng.chance(0.3) ? { stopAfter: rng.between(1, 4) } : {}) };
}

class Stopped extends Error {}

const one = (db: Database, sql: string, ...p: unknown[]) => db.prepare(sql).pluck().get(...p);

/** What the runs from `from` on see, and the current versions. */
function keptView(db: Database, from: number): string {
  const out: unknown[] = [];
  for (const run of db.prepare("SELECT run_id FROM _runs WHERE run_id >= ? ORDER BY run_id").pluck().all(from) as number[]) {
    for (const r of StoredResources) {
      out.push(one(db, `SELECT group_concat(vid) FROM (SELECT vid FROM _${r}_v WHERE valid_from_run <= ? AND (valid_to_run IS NULL OR valid_to_run > ?) ORDER BY vid)`, run, run));
    }
    out.push(db.prepare("SELECT resource, id, op, changed_fields FROM changes WHERE run_id = ? ORDER BY resource, id, op").raw().all(run));
  }
  for (const r of StoredResources) out.push(one(db, `SELECT group_concat(vid || ':' || hash) FROM (SELECT v.vid, d.hash FROM _${r}_v v JOIN _${r}_d d USING (vid) WHERE v.valid_to_run IS NULL ORDER BY v.vid)`));
  return JSON.stringify(out);
}

/** Every row count that a prune changes. */
const everything = (db: Database) =>
  JSON.stringify([...["_runs", "_run_counts", "_pruned_runs", "_deliveries", "_delivered_runs"].map((t) => one(db, `SELECT count(*) FROM ${t}`)), ...StoredResources.map((r) => one(db, `SELECT count(*) FROM _${r}_v`))]);

/** Run one drawn prune on the schedule's snapshot; the violations it shows. */
export function runPrune(db: Database, step: PruneStep, outputs: readonly DeliveryLog[], now: Date, trace: string[], bump: (k: string) => void): Violation[] {
  const v: Violation[] = [];
  const holders = { outputs: outputs.map((o) => ({ id: o.output, name: o.output })), reconcileJobs: step.reconcile ? ["monthly-reconcile"] : [], now };
  const plan = planPrune(db, step.bound, holders);
  const from = plan.keepFrom ?? Number.MAX_SAFE_INTEGER;
  const kept = keptView(db, from);
  const all = everything(db);
  // Each run about to go reached every output whole.
  if (plan.holds.length === 0 && plan.runs.length > 0) {
    for (const out of outputs) {
      const got = new Set(out.rows.filter((r) => r.run_id < from).map((r) => `${r.run_id} ${r.resource} ${r.op} ${r.id}`));
      const lost = (db.prepare("SELECT run_id, resource, op, id FROM changes WHERE run_id < ?").raw().all(from) as unknown[][]).map((r) => r.join(" ")).filter((k) => !got.has(k));
      if (lost.length) v.push({ kind: "prune-undelivered", message: `${out.output}: a prune to ${plan.boundText} removes ${lost.length} change(s) it never received: ${lost.slice(0, 5).join("; ")}` });
    }
  }
  let steps = 0;
  let outcome = "finished";
  try {
    prune(db, step.bound, {
      ...holders,
      now: () => now,
      batch: step.batch,
      vacuumPages: 4,
      onProgress: () => {
        if (step.stopAfter !== undefined && ++steps >= step.stopAfter) throw new Stopped();
      },
    });
  } catch (e) {
    if (e instanceof PruneHeldError) outcome = "held";
    else if (e instanceof Stopped) outcome = "stopped";
    else throw e;
  }
  bump(`prunes ${outcome}`);
  trace.push(`  prune ${plan.boundText}${step.reconcile ? " (with the monthly reconciliation)" : ""}: ${outcome}, first kept run ${plan.keepFrom ?? "-"}, ${plan.runs.length} run(s) to remove${plan.holds.length ? `; held by ${plan.holds.map((h) => `${h.name} (run ${h.needsRun})`).join(", ")}` : ""}`);
  if (keptView(db, from) !== kept) v.push({ kind: "prune-lost-kept", message: `a prune to ${plan.boundText} (${outcome}) changed what the runs from ${from} on see` });
  if (outcome === "held") {
    if (everything(db) !== all) v.push({ kind: "prune-held-changed", message: `a held prune to ${plan.boundText} changed the snapshot` });
    for (const h of plan.holds.filter((x) => x.kind === "output")) {
      if (one(db, "SELECT 1 FROM _delivered_runs WHERE output = ? AND run_id = ?", h.name, h.needsRun) !== undefined) {
        v.push({ kind: "prune-held-changed", message: `a prune was held by ${h.name} for run ${h.needsRun}, which it had received` });
      }
    }
  }
  if (outcome === "finished" && plan.keepFrom !== undefined) {
    const left = StoredResources.reduce((n, r) => n + (one(db, `SELECT count(*) FROM _${r}_v WHERE valid_to_run < ? AND ended_by IS NOT NULL`, plan.keepFrom) as number), 0);
    if (left > 0) v.push({ kind: "prune-left-history", message: `a prune to ${plan.boundText} left ${left} version(s) that ended before run ${plan.keepFrom}` });
  }
  const integrity = db.pragma("integrity_check", { simple: true });
  if (integrity !== "ok") v.push({ kind: "prune-integrity", message: `after a prune to ${plan.boundText}: ${String(integrity)}` });
  return v;
}

/**
 * `benefits-sync prune`: history that does not grow forever. The runs before the first run kept
 * (prune-plan.ts) go, with the versions that ended before it and everything recorded per run
 * (counts, walk checkpoints, quarantine); current versions never go, nor any version still current
 * as of a kept run. Each removed run leaves one line (pruned-runs.ts), so that every answer that
 * asks for it says it was pruned. Then the file gives the freed pages back (incremental vacuum).
 *
 * Crash-safe in steps, each its own transaction:
 *
 * 1. the runs' lines, in one transaction with the plan checked again under the write lock (a
 *    delivery or a new run since the plan is seen), and the removal of the runs and their records:
 *    from here on, the history starts at the first run kept;
 * 2. the closed versions, a batch at a time (a version's JSON, claim lines and counts go with it,
 *    by the schema's triggers): a prune stopped here has removed some of what no kept run needs,
 *    and the next prune removes the rest;
 * 3. the free pages handed back, a slice at a time, with a checkpoint after each (the WAL stays small).
 *
 * All of it under the erasure rule (erasure.ts): what it removed is zeros in the file once it
 * returns, and the WAL is emptied, so removed history is not readable in the file's bytes.
 *
 * A sync may run beside it: it writes versions of runs after the first kept, which a prune never
 * touches; they take turns at the write lock.
 */
import type { Database } from "better-sqlite3";
import { pageBytes, rewriteWhole, startErasure, tryEmptyWal as checkpoint, tryFinish, wholeRewriteRefusal, writtenUnderErasureRule } from "../file/erasure.js";
import { closedBefore, planPrune, type KnownOutput, type PruneBound, type PrunePlan } from "./prune-plan.js";
import { StoredResources, type StoredResource } from "../schema/resources.js";

export interface PruneOptions {
  readonly outputs?: readonly KnownOutput[];
  readonly reconcileJobs?: readonly string[];
  readonly now?: () => Date;
  /** Versions removed per transaction. */
  readonly batch?: number;
  /** Pages handed back per step of the vacuum. */
  readonly vacuumPages?: number;
  /**
   * `full`: rewrite the whole file afterwards (SQLite's VACUUM), which also gives back the room the
   * removed versions leave inside pages that still hold kept rows (an incremental vacuum gives back
   * whole free pages only). Needs free disk of twice the file and no other process reading it.
   */
  readonly vacuum?: "incremental" | "full";
  readonly onProgress?: (step: string, done: number, total: number) => void;
  /** Outputs of the delivery ledger no longer used: their receipts go, and they hold nothing back (prune-plan.ts). */
  readonly forget?: readonly string[];
}

export interface PruneResult {
  readonly plan: PrunePlan;
  /** The prune's id in `_prunes`; undefined when nothing was to be removed or it was held. */
  readonly pruneId?: number;
  readonly runsRemoved: number;
  readonly versionsRemoved: Readonly<Record<StoredResource, number>>;
  /** The file's size before and after (bytes): its pages, as SQLite counts them (the disk follows at the next checkpoint if a reader held it back). */
  readonly bytesBefore: number;
  readonly bytesAfter: number;
  /** Free pages the file could not give back (a snapshot made before incremental vacuum existed here). */
  readonly bytesFree: number;
  /** How the file was compacted: `full` (VACUUM), or `incremental` (a full one asked for falls back to it, saying why in `vacuumNote`). */
  readonly vacuumed: "incremental" | "full";
  readonly vacuumNote?: string;
  /** The WAL was emptied after (erasure.ts); false: a reader held it, and what was removed leaves it at the next checkpoint. */
  readonly walEmptied: boolean;
}

/** Thrown when something still needs the history the bound would remove; nothing was changed. */
export class PruneHeldError extends Error {
  readonly code = "PRUNE_HELD";
  constructor(readonly plan: PrunePlan) {
    super(`${plan.boundText} would remove runs ${plan.runs[0]} to ${plan.runs[plan.runs.length - 1]}, which ${plan.holds.length === 1 ? "something still needs" : "these still need"}: ${plan.holds.map((h) => h.why).join("; ")}. Nothing was removed`);
  }
}

/** What a prune that failed had removed before it stopped (its steps commit one by one): see {@link prunedBefore}. */
export interface PruneProgress {
  /** The runs removed (step 1 committed), the history then starting at `keepFrom`. */
  runs: readonly number[];
  keepFrom?: number;
  versions: number;
}

/** What the prune that threw `e` had removed, when it was a prune's failure. */
export function prunedBefore(e: unknown): PruneProgress | undefined {
  return (e as { prunedBefore?: PruneProgress } | null)?.prunedBefore;
}

/** Prune to `bound`. Throws {@link PruneHeldError} (nothing changed) when something holds it back. */
export function prune(db: Database, bound: PruneBound, opts: PruneOptions = {}): PruneResult {
  const erasure = startErasure(db);
  const so: PruneProgress = { runs: [], versions: 0 };
  let result: Omit<PruneResult, "walEmptied">;
  try {
    result = pruneSteps(db, bound, opts, so);
  } catch (e) {
    tryFinish(erasure);
    if (e !== null && typeof e === "object" && !(e instanceof PruneHeldError)) Object.defineProperty(e, "prunedBefore", { value: so });
    throw e;
  }
  // The whole rewrite a file written before the rule needs was done above, with the bytes counted.
  return { ...result, walEmptied: erasure.finish({ rewrite: false }).walEmptied };
}

function pruneSteps(db: Database, bound: PruneBound, opts: PruneOptions, so: PruneProgress): Omit<PruneResult, "walEmptied"> {
  const now = opts.now ?? (() => new Date());
  const progress = opts.onProgress ?? (() => {});
  const planOpts = { outputs: opts.outputs ?? [], reconcileJobs: opts.reconcileJobs ?? [], now: now(), forget: opts.forget ?? [] };
  checkpoint(db);
  const bytesBefore = pageBytes(db);
  const removed = Object.fromEntries(StoredResources.map((r) => [r, 0])) as Record<StoredResource, number>;
  // 1. Under the write lock, planned again: what was seen before may have moved.
  const first = db
    .transaction(() => {
      const plan = planPrune(db, bound, planOpts);
      if (plan.holds.length > 0) throw new PruneHeldError(plan);
      for (const id of planOpts.forget) {
        db.prepare("DELETE FROM _delivered_runs WHERE output = ?").run(id);
        db.prepare("DELETE FROM _deliveries WHERE output = ?").run(id);
      }
      if (plan.keepFrom === undefined || plan.runs.length === 0) return { plan, pruneId: undefined };
      const pruneId = Number(
        db.prepare("INSERT INTO _prunes (history_from_run, bound, started_at, runs) VALUES (?, ?, ?, ?)").run(plan.keepFrom, plan.boundText, now().toISOString(), plan.runs.length)
          .lastInsertRowid,
      );
      removeRuns(db, plan.keepFrom, pruneId);
      return { plan, pruneId };
    })
    .immediate();
  const { plan, pruneId } = first;
  if (pruneId !== undefined) Object.assign(so, { runs: plan.runs, keepFrom: plan.keepFrom });
  const below = plan.closedBelow;
  // 2. The closed versions no kept run sees, a batch at a time.
  const batch = opts.batch ?? 20_000;
  const total = below === 0 ? 0 : StoredResources.reduce((n, r) => n + closedBefore(db, r, below), 0);
  let done = 0;
  for (const r of StoredResources) {
    if (below === 0) break;
    const del = db.prepare(`DELETE FROM _${r}_v WHERE vid IN (SELECT vid FROM _${r}_v WHERE valid_to_run < ? AND ended_by IS NOT NULL LIMIT ?)`);
    for (;;) {
      const n = db.transaction(() => del.run(below, batch).changes).immediate();
      removed[r] += n;
      done += n;
      so.versions = done;
      if (n > 0) progress(`closed versions (${r})`, done, total);
      if (n < batch) break;
    }
  }
  if (pruneId !== undefined) {
    const versions = Object.values(removed).reduce((a, b) => a + b, 0);
    db.prepare("UPDATE _prunes SET versions = ?, finished_at = ? WHERE prune_id = ?").run(versions, now().toISOString(), pruneId);
  }
  // 3. The file gives its free pages back, or is rewritten whole: asked for, or the first removal
  // from a file written before the erasure rule, whose unused room holds older copies of rows.
  const stale = plan.runs.length + done > 0 && !writtenUnderErasureRule(db);
  const refusal = opts.vacuum === "full" || stale ? wholeRewriteRefusal(db) : undefined;
  const full = (opts.vacuum === "full" || stale) && refusal === undefined;
  const note = refusal === undefined ? undefined : stale ? `${refusal}: older copies of the removed history stay readable in the file's unused room until then` : `--vacuum: ${refusal}; the free pages were given back instead`;
  if (full) {
    progress("rewriting the file (VACUUM)", 0, 1);
    rewriteWhole(db);
    checkpoint(db);
  }
  const bytesFree = vacuum(db, opts.vacuumPages ?? 16_384, progress);
  const bytesAfter = pageBytes(db);
  if (pruneId !== undefined) db.prepare("UPDATE _prunes SET bytes_reclaimed = ? WHERE prune_id = ?").run(Math.max(0, bytesBefore - bytesAfter), pruneId);
  return {
    plan,
    ...(pruneId !== undefined ? { pruneId } : {}),
    runsRemoved: plan.runs.length,
    versionsRemoved: removed,
    bytesBefore,
    bytesAfter,
    bytesFree,
    vacuumed: full ? "full" : "incremental",
    ...(note ? { vacuumNote: note } : {}),
  };
}

/** The runs before `keep` leave their lines; their records go. */
function removeRuns(db: Database, keep: number, pruneId: number): void {
  db.prepare(
    `INSERT OR REPLACE INTO _pruned_runs (run_id, job, status, started_at, finished_at, seen, inserted, updated, deleted, unchanged, quarantined, prune_id)
     SELECT r.run_id, r.job, r.status, r.started_at, r.finished_at, c.seen, c.inserted, c.updated, c.deleted, c.unchanged, c.quarantined, ?
     FROM _runs r LEFT JOIN (
       SELECT run_id, sum(seen) AS seen, sum(inserted) AS inserted, sum(updated) AS updated, sum(deleted) AS deleted,
              sum(unchanged) AS unchanged, sum(quarantined) AS quarantined
       FROM _run_counts WHERE run_id < ? GROUP BY run_id) c ON c.run_id = r.run_id
     WHERE r.run_id < ?`,
  ).run(pruneId, keep, keep);
  for (const t of ["_run_counts", "_walk", "_quarantine"]) db.prepare(`DELETE FROM ${t} WHERE run_id < ?`).run(keep);
  db.prepare("DELETE FROM _runs WHERE run_id < ?").run(keep);
}

/**
 * Hand the free pages back to the file system, `pages` at a time with a checkpoint after each.
 * Returns the bytes left free: a snapshot made without incremental vacuum keeps its free pages
 * (later runs reuse them; `VACUUM` on a quiet snapshot gives them back).
 */
function vacuum(db: Database, pages: number, progress: (step: string, done: number, total: number) => void): number {
  const free = () => db.pragma("freelist_count", { simple: true }) as number;
  const size = db.pragma("page_size", { simple: true }) as number;
  const total = free();
  if ((db.pragma("auto_vacuum", { simple: true }) as number) !== 2) return total * size;
  let left = total;
  while (left > 0) {
    db.pragma(`incremental_vacuum(${pages})`);
    checkpoint(db);
    const now = free();
    progress("free pages given back", total - now, total);
    if (now >= left) break;
    left = now;
  }
  return free() * size;
}

/**
 * Which history a prune may remove (prune.ts does it): the first run it keeps, and what holds it back.
 *
 * The bound names a run R: the Nth newest sync that succeeded (`--keep-runs N`; the webhook
 * worker's runs are not counted, they are kept with the syncs around them), or the first run that
 * started on or after a date (`--before DATE`, UTC). Every run from R on is kept whole: as of
 * each, every view answers as before. R is moved earlier, never later:
 *
 * - to the last sync that succeeded, so the current state stays the state as of a kept run;
 * - to a run still running;
 * - to the start of a chain of runs (a failed walk and the runs that resumed it), kept together.
 *
 * Then what still needs the runs before R holds the prune back, each named: an output (a folder,
 * a bucket, a warehouse, configured or in the delivery ledger) that has not received a run's
 * changes yet, and a reconciliation job whose report compares the state as of a run before R.
 * A held prune removes nothing.
 */
import type { Database } from "better-sqlite3";
import { UsageError } from "../../input-errors.js";
import { historyFromRun } from "./pruned-runs.js";
import { WEBHOOK_JOB } from "../runs/run-log.js";
import { StoredResources, type StoredResource } from "../schema/resources.js";

export type PruneBound = { readonly keepRuns: number } | { readonly before: string };

/** An output the ledger or the config knows: its ledger id, how people name it, where it started on purpose. */
export interface KnownOutput {
  readonly id: string;
  readonly name: string;
  readonly fromRun?: number;
}

/** Why a run before the bound must stay. */
export interface PruneHold {
  readonly kind: "output" | "job";
  /** The output (as people name it) or the job. */
  readonly name: string;
  /** An output's id in the delivery ledger. */
  readonly id?: string;
  /** The earliest run it needs. */
  readonly needsRun: number;
  readonly why: string;
}

export interface PrunePlan {
  readonly bound: PruneBound;
  /** `--keep-runs 30` or `--before 2026-10-01`, for messages and the prune log. */
  readonly boundText: string;
  /** The first run kept; undefined when the bound keeps every run. */
  readonly keepFrom?: number;
  /** Why the first run kept is earlier than the bound named (each moved it). */
  readonly moved: readonly string[];
  /** The runs to remove (ids ascending). */
  readonly runs: readonly number[];
  /** Closed versions to remove, per resource (those that ended before the first run kept). */
  readonly versions: Readonly<Record<StoredResource, number>>;
  /** Closed versions that ended before this run go (the first run kept, or the history's start if later: a prune stopped before its versions); 0: none. */
  readonly closedBelow: number;
  readonly holds: readonly PruneHold[];
}

/**
 * `--forget-output ID`: outputs of the delivery ledger that are no longer used, whose receipts the
 * prune removes (such an output is then new: it starts again at a kept run, on purpose). Only an
 * output the ledger knows, and not a configured sink (the next sync would deliver to it again).
 */
function checkForget(db: Database, forget: readonly string[], configured: readonly KnownOutput[]): void {
  const known = new Set(db.prepare("SELECT DISTINCT output FROM _deliveries").pluck().all() as string[]);
  const problems: string[] = [];
  for (const id of forget) {
    const sink = configured.find((o) => o.id === id);
    if (sink) problems.push(`--forget-output ${id}: it is ${sink.name}, which every sync delivers to; take it out of the config first`);
    else if (!known.has(id)) problems.push(`--forget-output ${id}: no output of that name in the delivery ledger (it has ${known.size ? [...known].join(", ") : "none"})`);
  }
  if (problems.length) throw new UsageError(problems);
}

/** How many of `r`'s versions ended before run `run` (by the index on valid_to_run). */
export const closedBefore = (db: Database, r: StoredResource, run: number): number =>
  db.prepare(`SELECT count(*) FROM _${r}_v WHERE valid_to_run < ? AND ended_by IS NOT NULL`).pluck().get(run) as number;

export const boundText = (b: PruneBound): string => ("keepRuns" in b ? `--keep-runs ${b.keepRuns}` : `--before ${b.before}`);

/** First days (UTC) of last month and this month of `now`. */
function monthStarts(now: Date): [string, string] {
  const first = (m: number) => new Date(Date.UTC(now.getUTCFullYear(), m, 1)).toISOString().slice(0, 10);
  return [first(now.getUTCMonth() - 1), first(now.getUTCMonth())];
}

/** The last sync that succeeded having started on or before `day` (UTC), as `reconcile --from DAY` reads it. */
const asOfDay = (db: Database, day: string): number | undefined =>
  db.prepare("SELECT run_id FROM _runs WHERE status = 'succeeded' AND substr(started_at, 1, 10) <= ? ORDER BY started_at DESC, run_id DESC LIMIT 1").pluck().get(day) as
    | number
    | undefined;

/** The bound's run before it is moved, or undefined when it keeps every run. */
function boundRun(db: Database, b: PruneBound): number | undefined {
  if ("keepRuns" in b) {
    return db
      .prepare("SELECT run_id FROM _runs WHERE status = 'succeeded' AND job <> ? ORDER BY run_id DESC LIMIT 1 OFFSET ?")
      .pluck()
      .get(WEBHOOK_JOB, b.keepRuns - 1) as number | undefined;
  }
  const first = db.prepare("SELECT min(run_id) FROM _runs WHERE started_at >= ?").pluck().get(b.before) as number | null;
  return first ?? Number.MAX_SAFE_INTEGER;
}

/**
 * Plan a prune to `bound`, `now` dating the reconciliation jobs' next reports. `outputs`: the
 * configured outputs (the ledger's own are added); `reconcileJobs`: the enabled reconciliation
 * jobs' names. Reads only. `count`: count the closed versions (a dry run and the report do; the
 * check inside the prune's first transaction does not).
 */
export function planPrune(
  db: Database,
  bound: PruneBound,
  opts: { outputs?: readonly KnownOutput[]; reconcileJobs?: readonly string[]; now?: Date; count?: boolean; forget?: readonly string[] } = {},
): PrunePlan {
  checkForget(db, opts.forget ?? [], opts.outputs ?? []);
  const moved: string[] = [];
  const none = Object.fromEntries(StoredResources.map((r) => [r, 0])) as Record<StoredResource, number>;
  let keep = boundRun(db, bound);
  const lastSync = db.prepare("SELECT max(run_id) FROM _runs WHERE status = 'succeeded' AND job <> ?").pluck().get(WEBHOOK_JOB) as number | null;
  if (keep !== undefined && (lastSync === null || keep > lastSync)) {
    keep = lastSync ?? undefined;
    moved.push(lastSync === null ? "no sync has succeeded yet: every run is kept" : `run ${lastSync} is kept: the last sync that succeeded (the current state is the state as of it)`);
  }
  const running = db.prepare("SELECT min(run_id) FROM _runs WHERE status = 'running'").pluck().get() as number | null;
  if (keep !== undefined && running !== null && running < keep) {
    keep = running;
    moved.push(`run ${running} is kept: it is still running`);
  }
  // A chain (a failed walk and the runs that resumed it) is kept whole.
  for (;;) {
    if (keep === undefined) break;
    const from = db.prepare("SELECT min(resumed_from) FROM _runs WHERE run_id >= ? AND resumed_from < ?").pluck().get(keep, keep) as number | null;
    if (from === null) break;
    moved.push(`run ${from} is kept: a run kept resumed its walk`);
    keep = from;
  }
  const runs = keep === undefined ? [] : (db.prepare("SELECT run_id FROM _runs WHERE run_id < ? ORDER BY run_id").pluck().all(keep) as number[]);
  // Closed versions below the history's start are removed too (a prune stopped before it got to them).
  const closedBelow = Math.max(keep ?? 0, historyFromRun(db) ?? 0);
  const versions = { ...none };
  if (opts.count && closedBelow > 0) for (const r of StoredResources) versions[r] = closedBefore(db, r, closedBelow);
  const forgotten = new Set(opts.forget ?? []);
  const holds =
    keep === undefined || runs.length === 0
      ? []
      : [...outputHolds(db, keep, opts.outputs ?? []).filter((h) => h.id === undefined || !forgotten.has(h.id)), ...jobHolds(db, keep, opts.reconcileJobs ?? [], opts.now ?? new Date())];
  return { bound, boundText: boundText(bound), ...(keep !== undefined ? { keepFrom: keep } : {}), moved, runs, versions, closedBelow, holds };
}

/** Outputs that have not received a run before `keep`. */
function outputHolds(db: Database, keep: number, configured: readonly KnownOutput[]): PruneHold[] {
  const byId = new Map<string, KnownOutput>();
  for (const id of db.prepare("SELECT DISTINCT output FROM _deliveries").pluck().all() as string[]) byId.set(id, { id, name: id });
  for (const o of configured) byId.set(o.id, { ...byId.get(o.id), ...o });
  const first = db.prepare(
    `SELECT min(r.run_id) FROM _runs r WHERE r.status <> 'running' AND r.run_id < ? AND r.run_id >= ?
       AND NOT EXISTS (SELECT 1 FROM _delivered_runs d WHERE d.output = ? AND d.run_id = r.run_id)`,
  );
  const holds: PruneHold[] = [];
  for (const o of byId.values()) {
    const run = first.pluck().get(keep, o.fromRun ?? 0, o.id) as number | null;
    if (run === null) continue;
    const pending = db.prepare("SELECT count(*) FROM _deliveries WHERE output = ? AND status = 'pending'").pluck().get(o.id) as number;
    holds.push({
      kind: "output",
      id: o.id,
      name: o.name,
      needsRun: run,
      why:
        `${o.name} has not received run ${run}'s changes yet${pending ? " (a delivery to it is pending)" : ""}: deliver them first ` +
        `(\`benefits-sync sync\` delivers to every configured output; \`sync --out DIR\` to a folder of your own), or prune to keep run ${run}` +
        (o.name === o.id ? `; if it is no longer used, \`--forget-output ${o.id}\`` : ""),
    });
  }
  return holds;
}

/** Reconciliation jobs whose next report needs the state as of a run before `keep`. */
function jobHolds(db: Database, keep: number, jobs: readonly string[], now: Date): PruneHold[] {
  if (jobs.length === 0) return [];
  const [last, current] = monthStarts(now);
  // This month's report (maybe still to come, or caught up) starts at last month's first day;
  // next month's at this month's. A run of this month is the newest, and always kept.
  const day = asOfDay(db, last) !== undefined ? last : current;
  const run = asOfDay(db, day);
  if (run === undefined || run >= keep) return [];
  const started = String(db.prepare("SELECT started_at FROM _runs WHERE run_id = ?").pluck().get(run)).slice(0, 10);
  return jobs.map((name) => ({
    kind: "job" as const,
    name,
    needsRun: run,
    why:
      `the job ${name} compares the snapshot as of ${day} (run ${run}, the last sync that succeeded on or before it) in its ` +
      `${day === last ? "report of this month" : "next report"}: prune to keep run ${run} (\`--before ${started}\` keeps it), or disable the job (\`jobs.${name}.enabled: false\`)`,
  }));
}

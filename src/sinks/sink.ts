/**
 * The sink contract: how a delivery of stored changes reaches an output (a folder of CSV, JSONL
 * or Parquet files, a Postgres warehouse). A sink is fed from the snapshot's stored changes
 * ({@link runDeltas}), never from the network, and rides on the delivery ledger
 * (src/sinks/ledger.ts): a delivery that failed is retried by the next one, a delivered run is not
 * sent twice.
 *
 * One delivery is: `open` (for a plan: the folder's run and the runs it carries), `write` once per
 * stored resource, `commit` (the output now holds the delivery whole, or nothing of it), `close`
 * (always; after a failure it abandons whatever was written).
 */
import type { Database } from "better-sqlite3";
import { ConfigError } from "../errors.js";
import { UsageError } from "../input-errors.js";
import { historyFromRun, prunedRunMessage } from "../store/retention/pruned-runs.js";
import { StoredResources, type StoredResource } from "../store/schema/resources.js";
import { deliver, deliverEach, settleInterrupted, type DeliveryOutcome, type InterruptedDelivery } from "./ledger.js";
import { recordedStart, startOutput } from "./output-start.js";
import { runDeltas, type Delta } from "./run-deltas.js";
import { runRecords, type RunRecord } from "./run-records.js";
import { runFacts, type RunFacts } from "./run-facts.js";

/** What one delivery carries: the changes of `runs`, named after `folderRun` (a folder's run; for a warehouse, the run that asked). */
export interface DeliveryPlan {
  readonly folderRun: number;
  /** Ascending. */
  readonly runs: readonly number[];
  /**
   * Every finished run up to `folderRun` (ascending), and the snapshot's identity: for a sink
   * that keeps its own load ledger (a warehouse) and loads whatever it lacks, in order.
   */
  readonly finishedRuns?: readonly number[];
  readonly snapshotId?: string;
  /** The snapshot's record of these runs (times, status, what each walked, counts), for a sink that keeps them. */
  readonly runRecords?: (runs: readonly number[]) => readonly RunRecord[];
  /** The folder run's start, finish and walk, and the snapshot's id: what a folder's manifest says of it. */
  readonly facts?: RunFacts;
}

/**
 * A resource's changes, in {@link runDeltas} order: for the plan's runs, or for `runs` when a sink
 * that keeps its own ledger asks for others; with `typed`, each carries the typed columns. May be
 * read more than once.
 */
export type DeltaReader = (runs?: readonly number[], opts?: { readonly typed?: boolean }) => Iterable<Delta>;

export interface SinkSession<R> {
  write(resource: StoredResource, deltas: DeltaReader): Promise<void> | void;
  /** Make the delivery visible whole; what it returns is the delivery's outcome value. */
  commit(): Promise<R> | R;
  /** Always called; undoes anything not committed. */
  close(): Promise<void> | void;
}

export interface Sink<R> {
  /** The output's identity in the ledger (`csv:/abs/dir`, `postgres://host:port/db#schema`): never a secret. */
  readonly output: string;
  /** For messages: where the deltas go (no password). */
  readonly describe: string;
  /**
   * The crash rule: did this delivery, left pending by a process that died, reach the output
   * whole? (A folder renamed into place with the same runs; a warehouse whose load ledger lists
   * them.) `true` records it delivered; `false` sends its runs again.
   */
  arrived(d: InterruptedDelivery): Promise<boolean> | boolean;
  /**
   * Each run its own delivery (a folder: `DIR/00000010/` is that run's changes, as `export --run`
   * writes them), oldest first. Without it, one delivery carries every pending run (a warehouse
   * applies them in order in one load).
   */
  readonly perRun?: boolean;
  /**
   * Before a delivery claims anything: throw a ConfigError when the output refuses this snapshot's
   * deltas (it belongs to another, see files/folder-owner.ts), and tidy what a dead writer left.
   */
  prepare?(snapshotId: string | undefined): Promise<void> | void;
  open(plan: DeliveryPlan): Promise<SinkSession<R>> | SinkSession<R>;
}

/** Open, write every stored resource, commit, close. */
export async function writeDelivery<R>(db: Database, sink: Sink<R>, plan: DeliveryPlan): Promise<R> {
  // An output started later on purpose never asks for the runs before its start.
  const start = recordedStart(db, sink.output) ?? 0;
  // A delivery of no run (a warehouse asked to catch up to run 0) has no folder run to describe.
  const facts = plan.runs.length > 0 ? runFacts(db, plan.folderRun) : undefined;
  const id = facts ? facts.snapshotId ?? undefined : snapshotId(db);
  const session = await sink.open({
    ...plan,
    finishedRuns: finishedRuns(db, plan.folderRun).filter((r) => r >= start),
    ...(id !== undefined ? { snapshotId: id } : {}),
    ...(facts ? { facts } : {}),
    runRecords: (runs) => runRecords(db, runs),
  });
  try {
    for (const resource of StoredResources) await session.write(resource, (runs = plan.runs, opts) => runDeltas(db, resource, runs, opts));
    return await session.commit();
  } finally {
    await session.close();
  }
}

/**
 * Deliver to `sink` every change it has not received, up to run `forRun`: settles any delivery a
 * dead process left pending (with `sink.arrived`), then {@link deliver} (or, for a sink that takes
 * each run on its own, {@link deliverEach}). With `fromRun`, the output starts there (see
 * output-start.ts). Never throws: a failure (of the sink, of the start, or of the ledger itself)
 * is in the outcome.
 *
 * @returns an object, not a status string: `status` ("delivered", "nothing" or "failed"), the
 *   `runs` carried (or, failed, still pending), what `commit()` returned (`values`, one per run in
 *   order, for a `perRun` sink, `value` its last; `value` for any other), and `error` when failed.
 */
export async function deliverToSink<R>(db: Database, sink: Sink<R>, forRun: number, now?: () => Date, fromRun?: number): Promise<DeliveryOutcome<R>> {
  try {
    await sink.prepare?.(snapshotId(db));
    if (fromRun !== undefined) startOutput(db, sink.output, fromRun, sink.describe, now);
    else refuseNewAfterPrune(db, sink.output, sink.describe);
  } catch (e) {
    if (!(e instanceof ConfigError)) throw e;
    return { status: "failed", runs: [], error: { code: e.code, message: e.problems.join("; ") } };
  }
  try {
    await settleInterrupted(db, sink.output, (d) => sink.arrived(d), now);
    if (sink.perRun) return await deliverEach(db, sink.output, forRun, (runs) => writeDelivery(db, sink, { folderRun: runs[0]!, runs }), now);
    return await deliver(db, sink.output, forRun, (runs) => writeDelivery(db, sink, { folderRun: forRun, runs }), now);
  } catch (e) {
    // The ledger itself failed (the snapshot busy or unwritable): nothing was claimed or written.
    const { redact } = await import("../errors.js");
    return { status: "failed", runs: [], error: { code: "LEDGER", message: redact(e instanceof Error ? e.message : String(e)) } };
  }
}

/**
 * (Re)write exactly the changes run `runId` recorded (what `export --run N` does): any finished
 * run, a failed one included. The ledger is neither read nor changed. A ConfigError for an unknown
 * run or one still running.
 */
export async function exportRun<R>(db: Database, sink: Sink<R>, runId: number): Promise<R> {
  checkExportable(db, runId);
  return writeDelivery(db, sink, { folderRun: runId, runs: [runId] });
}

/**
 * A new output (nothing in the ledger) of a pruned snapshot would receive the kept runs' changes
 * alone, as if they were the whole history: it starts at a kept run on purpose, or not at all.
 */
function refuseNewAfterPrune(db: Database, output: string, where: string): void {
  const from = historyFromRun(db);
  if (from === undefined || db.prepare("SELECT 1 FROM _deliveries WHERE output = ? LIMIT 1").get(output) !== undefined) return;
  throw new ConfigError([
    `${where} is a new output, and this snapshot's runs before run ${from} were pruned: it cannot receive the whole history. ` +
      `Start it at a kept run on purpose (--from-run N, or "fromRun" in its sink's config), and load the state as of it first if it needs one (\`export --state --run N\`)`,
  ]);
}

export function checkExportable(db: Database, runId: number): void {
  const status = db.prepare("SELECT status FROM _runs WHERE run_id = ?").pluck().get(runId) as string | undefined;
  if (status === undefined) throw new UsageError([prunedRunMessage(db, runId, `run ${runId}`) ?? `run ${runId}: no run ${runId} in this snapshot; \`benefits-sync runs\` lists them`]);
  if (status === "running") throw new UsageError([`run ${runId}: it is still running, so its changes are not complete; export it once it has finished`]);
}

/** Every run up to `upto` that has finished (any status but running), ascending. */
export function finishedRuns(db: Database, upto: number): number[] {
  return db.prepare("SELECT run_id FROM _runs WHERE status <> 'running' AND run_id <= ? ORDER BY run_id").pluck().all(upto) as number[];
}

/** The snapshot's identity (migration 4); undefined in a snapshot not opened for writing since. */
export function snapshotId(db: Database): string | undefined {
  return db.prepare("SELECT value FROM _meta WHERE key = 'snapshot_id'").pluck().get() as string | undefined;
}

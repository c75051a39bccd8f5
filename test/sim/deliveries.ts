/**
 * Deliveries of the deltas, through the delivery ledger (src/sinks/ledger.ts), to two outputs that
 * keep what they received in memory, composed as the product's deliverToSink composes them (settle
 * what a dead process left pending, by asking the output, then deliver):
 *
 * - `warehouse`: `deliver`, one delivery carries every pending run; it keeps a load ledger of
 *   the runs it loaded (as the Postgres sink does), which is how it tells an interrupted delivery
 *   that did arrive;
 * - `folder`: `deliverEach`, one delivery per run; folder N holds exactly run N; an interrupted
 *   delivery arrived when its folder is there with the same runs.
 *
 * Faults: the output is down (its write throws: nothing kept, the runs ride with a later
 * delivery), or the process dies before a write or after it and before the ledger records it
 * (the ledger's connection fails from then on; its row stays pending for the next delivery to
 * settle). The ledger is imported statically: a tree where it does not load fails the run.
 */
import type { Database } from "better-sqlite3";
import { deliver, deliverEach, settleInterrupted, type InterruptedDelivery } from "../../src/sinks/ledger.js";
import { StoredResources } from "../../src/store/schema/resources.js";

export const OutputKinds = ["warehouse", "folder"] as const;
export type OutputKind = (typeof OutputKinds)[number];

export interface DeliveredRow {
  /** Replay order: the warehouse's delivery count; the folder's run number. */
  readonly seq: number;
  readonly run_id: number;
  readonly resource: string;
  readonly id: string;
  readonly op: string;
  readonly data: string | null;
}

/** How one delivery to one output goes wrong, if it does. */
export interface DeliveryFault {
  /** The output does not answer: each write throws. */
  readonly down: boolean;
  /** The process dies at the `at`-th write of this delivery: before it, or after it and before the ledger records it. */
  readonly crash: { readonly at: number; readonly point: "before-write" | "after-write" } | null;
}

export const NO_DELIVERY_FAULT: DeliveryFault = { down: false, crash: null };

/** One output: what it received, and what the harness saw while delivering to it. */
export interface DeliveryLog {
  readonly kind: OutputKind;
  readonly output: string;
  readonly rows: DeliveredRow[];
  readonly outcomes: { forRun: number; status: string; runs: readonly number[]; error?: string }[];
  /** Problems seen while delivering (the ledger passed other runs to write than it reported, ...). */
  readonly problems: string[];
  /** Warehouse: run -> the load that carried it. Folder: folder run -> the runs it holds. */
  readonly received: Map<number, readonly number[]>;
  attempts: number;
  failures: number;
  crashes: number;
}

export function newDeliveryLog(kind: OutputKind): DeliveryLog {
  return { kind, output: `sim:${kind}`, rows: [], outcomes: [], problems: [], received: new Map(), attempts: 0, failures: 0, crashes: 0 };
}

/** Every change the runs recorded, with the version's full record (a delete: the last known one). */
export function changesWithData(db: Database, runIds: readonly number[]): Omit<DeliveredRow, "seq">[] {
  if (runIds.length === 0) return [];
  const marks = runIds.map(() => "?").join(",");
  const out: Omit<DeliveredRow, "seq">[] = [];
  for (const r of StoredResources) {
    const rows = db
      .prepare(
        `SELECT c.run_id, c.resource, c.id, c.op,
           CASE WHEN c.op = 'delete'
             THEN (SELECT d.data FROM _${r}_v v JOIN _${r}_d d ON d.vid = v.vid WHERE v.id = c.id AND v.valid_to_run = c.run_id AND v.ended_by = 'delete' ORDER BY v.vid DESC LIMIT 1)
             ELSE (SELECT d.data FROM _${r}_v v JOIN _${r}_d d ON d.vid = v.vid WHERE v.id = c.id AND v.valid_from_run = c.run_id ORDER BY v.vid DESC LIMIT 1)
           END AS data
         FROM changes c WHERE c.resource = ? AND c.run_id IN (${marks})`,
      )
      .all(r, ...runIds) as Omit<DeliveredRow, "seq">[];
    out.push(...rows);
  }
  return out;
}

/** Whether a delivery a dead process left pending reached the output whole (the sink's `arrived`). */
function arrived(log: DeliveryLog, d: InterruptedDelivery): boolean {
  if (log.kind === "warehouse") return d.runs.length > 0 && d.runs.every((r) => log.received.has(r));
  return JSON.stringify(log.received.get(d.forRun)) === JSON.stringify(d.runs);
}

/** The output takes a delivery whole. */
function receive(log: DeliveryLog, db: Database, runIds: readonly number[]): number {
  const rows = changesWithData(db, runIds);
  let seq = log.attempts;
  if (log.kind === "folder") {
    seq = runIds[0]!;
    if (runIds.length !== 1) log.problems.push(`${log.output}: folder ${seq} was given runs ${JSON.stringify(runIds)}, not its own run alone`);
    if (log.received.has(seq)) log.problems.push(`${log.output}: folder ${seq} written a second time`);
    log.received.set(seq, [...runIds]);
  } else {
    for (const r of runIds) log.received.set(r, [...runIds]);
  }
  for (const r of rows) log.rows.push({ seq, ...r });
  return rows.length;
}

const crashError = () => Object.assign(new Error("the process was killed (simulated)"), { code: "SIM_CRASH" });

/** The ledger's view of the database: once the process is dead, every call fails. */
function dying(db: Database, dead: () => boolean): Database {
  return new Proxy(db, {
    get(target, key) {
      const v = Reflect.get(target, key, target) as unknown;
      if (typeof v !== "function") return v;
      return (...args: unknown[]) => {
        if (dead()) throw crashError();
        return (v as (...a: unknown[]) => unknown).apply(target, args);
      };
    },
  });
}

/**
 * One delivery to `log`'s output after run `forRun`. Returns whether the process died in it (then
 * nothing else is delivered by that process).
 */
export async function deliverTo(db: Database, log: DeliveryLog, forRun: number, fault: DeliveryFault, now: () => Date): Promise<boolean> {
  log.attempts++;
  await settleInterrupted(db, log.output, (d) => arrived(log, d), now);
  let dead = false;
  let writes = 0;
  const written: number[] = [];
  const write = (runIds: readonly number[]): number => {
    writes++;
    const crashHere = fault.crash !== null && fault.crash.at === writes;
    if (crashHere && fault.crash!.point === "before-write") {
      dead = true;
      throw crashError();
    }
    if (fault.down) throw Object.assign(new Error(`the ${log.kind} did not answer (simulated)`), { code: "SIM_SINK_DOWN" });
    written.push(...runIds);
    const n = receive(log, db, runIds);
    if (crashHere) dead = true; // written whole; the ledger never hears of it
    return n;
  };
  const ledgerDb = fault.crash ? dying(db, () => dead) : db;
  const outcome =
    log.kind === "folder" ? await deliverEach(ledgerDb, log.output, forRun, write, now) : await deliver(ledgerDb, log.output, forRun, write, now);
  if (dead) {
    log.crashes++;
    log.outcomes.push({ forRun, status: "crashed", runs: written });
    return true;
  }
  if (outcome.status === "failed") log.failures++;
  log.outcomes.push({ forRun, status: outcome.status, runs: outcome.runs, ...(outcome.error ? { error: `${outcome.error.code}: ${outcome.error.message}` } : {}) });
  const where = `${log.output}, delivery after run ${forRun}`;
  if (outcome.status === "delivered" && JSON.stringify(written) !== JSON.stringify(outcome.runs)) {
    log.problems.push(`${where}: write got runs ${JSON.stringify(written)} but the outcome says ${JSON.stringify(outcome.runs)}`);
  }
  if (outcome.status === "delivered" && writes === 0) log.problems.push(`${where}: delivered without calling write`);
  if (outcome.status === "failed" && !fault.down) log.problems.push(`${where}: failed although the output was up: ${outcome.error?.code}`);
  return false;
}

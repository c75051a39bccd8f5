/**
 * Deliveries of the deltas, through the delivery ledger (src/sinks/ledger.ts), to a sink that
 * keeps what it received in memory. The sink's `write` reads each pending run's changes with the
 * full record of each version, and fails (throws) when the schedule says so: a failed delivery
 * keeps nothing, and its runs must ride with a later one.
 */
import type { Database } from "better-sqlite3";
import { StoredResources } from "../../src/store/resources.js";

export const OUTPUT = "sim:warehouse";

export interface DeliveredRow {
  /** The order deliveries were received in (the sink's own count). */
  readonly seq: number;
  readonly run_id: number;
  readonly resource: string;
  readonly id: string;
  readonly op: string;
  readonly data: string | null;
}

interface DeliveryOutcomeLike {
  readonly status: "delivered" | "failed" | "nothing";
  readonly deliveryId?: number;
  readonly runs: readonly number[];
  readonly value?: unknown;
  readonly error?: { readonly code: string; readonly message: string };
}

export interface Ledger {
  deliver<T>(db: Database, output: string, forRun: number, write: (runIds: readonly number[]) => Promise<T> | T, now?: () => Date): Promise<DeliveryOutcomeLike>;
  pendingRuns(db: Database, output: string, uptoRun: number): number[];
}

let ledger: Promise<Ledger | undefined> | undefined;
let legacy: Promise<((db: Database, runId: number) => number[]) | undefined> | undefined;

/** The ledger, when the tree has it (it is being written beside this simulation). */
export function loadLedger(): Promise<Ledger | undefined> {
  const path = "../../src/sinks/ledger.js";
  ledger ??= import(/* @vite-ignore */ path).then(
    (m: Partial<Ledger>) => (typeof m.deliver === "function" && typeof m.pendingRuns === "function" ? (m as Ledger) : undefined),
    () => undefined,
  );
  return ledger;
}

/** How the deltas go out in this tree: the ledger, or (before it) a run's chain of resumed runs. */
export interface Deliverer {
  readonly kind: "ledger" | "chain";
  deliver(db: Database, log: DeliveryLog, forRun: number, fail: boolean, now: () => Date): Promise<void>;
}

/**
 * The ledger when the tree has it; else the older rule of src/sinks/run-deltas.ts, where a
 * successful run delivers its own changes and those of the failed runs it resumed
 * (`deliveryRuns`). That rule has no retry of a failed delivery, so the sink never fails there.
 */
export async function loadDeliverer(): Promise<Deliverer | undefined> {
  const l = await loadLedger();
  if (l) return { kind: "ledger", deliver: (db, log, forRun, fail, now) => deliverOnce(l, db, log, forRun, fail, now) };
  const path = "../../src/sinks/run-deltas.js";
  legacy ??= import(/* @vite-ignore */ path).then(
    (m: { deliveryRuns?: unknown }) => (typeof m.deliveryRuns === "function" ? (m.deliveryRuns as (db: Database, runId: number) => number[]) : undefined),
    () => undefined,
  );
  const runsOf = await legacy;
  if (!runsOf) return undefined;
  return {
    kind: "chain",
    deliver: async (db, log, forRun) => {
      log.attempts++;
      const runs = runsOf(db, forRun);
      const seq = log.outcomes.length;
      for (const r of changesWithData(db, runs)) log.rows.push({ seq, ...r });
      log.outcomes.push({ forRun, status: "delivered", runs });
    },
  };
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
             THEN (SELECT v.data FROM _${r}_v v WHERE v.id = c.id AND v.valid_to_run = c.run_id AND v.ended_by = 'delete' ORDER BY v.vid DESC LIMIT 1)
             ELSE (SELECT v.data FROM _${r}_v v WHERE v.id = c.id AND v.valid_from_run = c.run_id ORDER BY v.vid DESC LIMIT 1)
           END AS data
         FROM changes c WHERE c.resource = ? AND c.run_id IN (${marks})`,
      )
      .all(r, ...runIds) as Omit<DeliveredRow, "seq">[];
    out.push(...rows);
  }
  return out;
}

export interface DeliveryLog {
  readonly rows: DeliveredRow[];
  readonly outcomes: { forRun: number; status: string; runs: readonly number[]; error?: string }[];
  /** Problems seen while delivering (the ledger passed other runs to write than it reported, ...). */
  readonly problems: string[];
  attempts: number;
  failures: number;
}

export function newDeliveryLog(): DeliveryLog {
  return { rows: [], outcomes: [], problems: [], attempts: 0, failures: 0 };
}

/** One delivery after run `forRun`; `fail`: the sink is down this time. */
export async function deliverOnce(l: Ledger, db: Database, log: DeliveryLog, forRun: number, fail: boolean, now: () => Date): Promise<void> {
  log.attempts++;
  let written: readonly number[] | undefined;
  const outcome = await l.deliver(
    db,
    OUTPUT,
    forRun,
    (runIds) => {
      written = [...runIds];
      const rows = changesWithData(db, runIds);
      if (fail) throw Object.assign(new Error("the warehouse did not answer (simulated)"), { code: "SIM_SINK_DOWN" });
      const seq = log.outcomes.length;
      for (const r of rows) log.rows.push({ seq, ...r });
      return rows.length;
    },
    now,
  );
  if (outcome.status === "failed") log.failures++;
  log.outcomes.push({ forRun, status: outcome.status, runs: outcome.runs, ...(outcome.error ? { error: `${outcome.error.code}: ${outcome.error.message}` } : {}) });
  if (outcome.status !== "nothing" && written && JSON.stringify(written) !== JSON.stringify(outcome.runs)) {
    log.problems.push(`delivery after run ${forRun}: write got runs ${JSON.stringify(written)} but the outcome says ${JSON.stringify(outcome.runs)}`);
  }
  if (outcome.status === "delivered" && written === undefined) log.problems.push(`delivery after run ${forRun}: delivered without calling write`);
  if (outcome.status === "failed" && !fail) log.problems.push(`delivery after run ${forRun} failed although the sink was up: ${outcome.error?.code}`);
}

/**
 * The delivery ledger: which runs' changes each output (a CSV folder, later a warehouse) has
 * received. Deltas are defined per output, not per run chain: a delivery carries every change
 * recorded since that output's last successful delivery, whichever runs recorded it (a failed run
 * that was never resumed included), and a run is recorded received by an output once.
 *
 * Tables (migration 2): `_deliveries` (one row per attempt: pending, then delivered or failed) and
 * `_delivered_runs` (output, run_id) -> the delivery that carried it.
 */
import { processAlive } from "../store/runs/run-lease.js";
import type { Database } from "better-sqlite3";
import { hostname } from "node:os";
import { redact } from "../errors.js";

export interface DeliveryOutcome<T> {
  readonly status: "delivered" | "failed" | "nothing"; // "nothing": no pending run
  readonly deliveryId?: number;
  /** The run ids whose changes it carried (ascending). */
  readonly runs: readonly number[];
  readonly value?: T;
  /** Per run, for an output that takes each run on its own ({@link deliverEach}): what each delivery returned, in order. */
  readonly values?: readonly T[];
  /** With {@link deliverEach}, a failed outcome's runs are those still pending; these landed before it. */
  readonly delivered?: readonly number[];
  readonly error?: { readonly code: string; readonly message: string };
}

/** A delivery recorded pending whose process is gone: it may or may not have reached its output. */
export interface InterruptedDelivery {
  readonly deliveryId: number;
  readonly output: string;
  readonly forRun: number;
  readonly runs: readonly number[];
}

/**
 * Runs (status succeeded or failed, run_id <= uptoRun) whose changes `output` has not received.
 * Ascending. A run still `running` is never listed (its changes are not complete); any other
 * status counts as finished.
 *
 * @example pendingRuns(db, "csv:/data/deltas", 7) // [5, 6, 7]: run 5 failed, 6's delivery failed
 */
export function pendingRuns(db: Database, output: string, uptoRun: number, limit = -1): number[] {
  return db
    .prepare(
      `SELECT r.run_id FROM _runs r
       WHERE r.status <> 'running' AND r.run_id <= ?
         AND NOT EXISTS (SELECT 1 FROM _delivered_runs d WHERE d.output = ? AND d.run_id = r.run_id)
       ORDER BY r.run_id LIMIT ?`,
    )
    .pluck()
    .all(uptoRun, output, limit) as number[];
}

/**
 * Deliver to `output` every pending change up to and including run `forRun`: records a pending
 * delivery, calls write(runIds), then marks it delivered and the runs received in one
 * transaction; if write throws, the delivery is recorded failed (error text redacted) and the runs
 * stay pending. Never throws for a failure of write.
 *
 * Runs held by a delivery to the same output that is still in progress in another live process
 * are left to it. A pending delivery whose process is gone (a crash between the write and the
 * ledger commit) is settled first, see {@link settleInterrupted}; without a way to look at the
 * output, it is recorded failed and its runs are delivered again (at least once). The CSV sink
 * looks (deliverCsv), so that a folder that did arrive is not sent twice.
 *
 * @example const outcome = await deliver(db, "csv:/data/deltas", run.runId, (runs) => writeFolder(runs));
 */
export async function deliver<T>(
  db: Database,
  output: string,
  forRun: number,
  write: (runIds: readonly number[]) => Promise<T> | T,
  now: () => Date = () => new Date(),
  opts: { readonly oneRun?: boolean } = {},
): Promise<DeliveryOutcome<T>> {
  await settleInterrupted(db, output, () => false, now);
  const claim = db
    .transaction(() => {
      const held = new Set(
        (db.prepare("SELECT runs FROM _deliveries WHERE output = ? AND status = 'pending'").pluck().all(output) as string[]).flatMap(
          (r) => JSON.parse(r) as number[],
        ),
      );
      // oneRun reads no further than it needs: a first delivery after years of runs claims one at a time.
      const all = pendingRuns(db, output, forRun, opts.oneRun ? held.size + 1 : -1).filter((r) => !held.has(r));
      // oneRun: the oldest pending run alone, recorded (and named, for a folder) as its own.
      const runs = opts.oneRun ? all.slice(0, 1) : all;
      if (runs.length === 0) return undefined;
      const info = db
        .prepare("INSERT INTO _deliveries (output, for_run, runs, status, started_at, detail) VALUES (?, ?, ?, 'pending', ?, ?)")
        .run(output, opts.oneRun ? runs[0] : forRun, JSON.stringify(runs), now().toISOString(), JSON.stringify({ pid: process.pid, host: hostname() }));
      return { id: Number(info.lastInsertRowid), runs };
    })
    .immediate();
  if (!claim) return { status: "nothing", runs: [] };
  const { id, runs } = claim;
  const key = inFlightKey(db, id);
  inFlight.add(key);
  try {
    let value: T;
    try {
      value = await write(runs);
    } catch (e) {
      const error = describe(e);
      try {
        db.prepare("UPDATE _deliveries SET status = 'failed', finished_at = ?, error = ? WHERE delivery_id = ? AND status = 'pending'").run(
          now().toISOString(),
          `${error.code}: ${error.message}`,
          id,
        );
      } catch {
        // Left pending: the next delivery settles it as interrupted, and its runs stay pending.
      }
      return { status: "failed", deliveryId: id, runs, error };
    }
    try {
      db.transaction(() => markDelivered(db, output, id, runs, now())).immediate();
    } catch (e) {
      const cause = describe(e);
      return {
        status: "failed",
        deliveryId: id,
        runs,
        value,
        error: { code: "LEDGER", message: `the deltas were written, but the delivery could not be recorded (${cause.message}); the next delivery settles it` },
      };
    }
    return { status: "delivered", deliveryId: id, runs, value };
  } finally {
    inFlight.delete(key);
  }
}

/**
 * Deliver to `output` each pending run up to `forRun` on its own, oldest first: one
 * {@link deliver} per run, each recorded delivered as it lands, so a crash or a failure between
 * two runs leaves the first delivered and the next pending. Stops at the first failure (a later
 * run is not written before an earlier one). The outcome: `delivered` with every run delivered
 * (`values` in order, `value` the last); `failed` with the runs still pending (`values` and
 * `delivered` what landed before it); `nothing` when no run was pending.
 *
 * @example await deliverEach(db, "csv:/data/deltas", 7, ([run]) => writeFolder(run)) // 00000005/, 00000006/, 00000007/
 */
export async function deliverEach<T>(
  db: Database,
  output: string,
  forRun: number,
  write: (runIds: readonly number[]) => Promise<T> | T,
  now: () => Date = () => new Date(),
): Promise<DeliveryOutcome<T>> {
  const values: T[] = [];
  const delivered: number[] = [];
  const received = new Set<number>();
  let last: number | undefined;
  // Each turn delivers a run this call has not delivered, so the loop ends after at most one turn
  // per run up to forRun. A run delivered here and listed pending again means the ledger lost its
  // receipt: written again, it would be pending again, forever. The turn fails instead, naming it.
  const once = (runs: readonly number[]) => {
    const again = runs.find((r) => received.has(r));
    if (again !== undefined) throw redelivery(output, again);
    return write(runs);
  };
  for (;;) {
    const o = await deliver(db, output, forRun, once, now, { oneRun: true });
    if (o.status === "delivered") {
      values.push(o.value as T);
      delivered.push(...o.runs);
      for (const r of o.runs) received.add(r);
      last = o.deliveryId;
      continue;
    }
    if (o.status === "nothing") {
      if (delivered.length === 0) return o;
      return { status: "delivered", deliveryId: last!, runs: delivered, values, value: values[values.length - 1]! };
    }
    let still: readonly number[] = o.runs;
    try {
      still = pendingRuns(db, output, forRun);
    } catch {
      // The ledger cannot be read: the failed run is the one known to be pending.
    }
    return { ...o, runs: still, delivered, values };
  }
}

function redelivery(output: string, run: number): Error {
  return Object.assign(
    new Error(
      `run ${run} is listed pending for ${output} again right after it was delivered there: the ledger did not keep its receipt, ` +
        `so the delivery stops instead of writing run ${run} again (and again); the snapshot's delivery ledger (_delivered_runs) needs looking at`,
    ),
    { code: "LEDGER" },
  );
}

/**
 * The crash rule. A delivery still `pending` whose process is gone was interrupted somewhere
 * between recording it and recording its outcome: before its write, during it, or after the
 * write reached the output but before the ledger commit. `isComplete` looks at the output: a
 * delivery that did arrive whole (a CSV folder renamed into place with a manifest that lists the
 * same runs and matches its files) is recorded delivered, so its changes are not sent a second
 * time; anything else is recorded failed ("interrupted") and its runs are pending again, so they
 * ride with the next delivery. A delivery still in progress (see `inProgress`) is left alone.
 * Returns the ids settled each way.
 */
export async function settleInterrupted(
  db: Database,
  output: string,
  isComplete: (d: InterruptedDelivery) => boolean | Promise<boolean>,
  now: () => Date = () => new Date(),
): Promise<{ delivered: number[]; failed: number[] }> {
  const settled = { delivered: [] as number[], failed: [] as number[] };
  const rows = db
    .prepare("SELECT delivery_id, for_run, runs, started_at, detail FROM _deliveries WHERE output = ? AND status = 'pending' ORDER BY delivery_id")
    .all(output) as { delivery_id: number; for_run: number; runs: string; started_at: string; detail: string | null }[];
  for (const row of rows) {
    if (inProgress(db, row, now())) continue;
    const d: InterruptedDelivery = { deliveryId: row.delivery_id, output, forRun: row.for_run, runs: JSON.parse(row.runs) as number[] };
    let complete: boolean;
    try {
      complete = await isComplete(d);
    } catch {
      complete = false;
    }
    db.transaction(() => {
      // Another process may have settled it meanwhile.
      if (db.prepare("SELECT status FROM _deliveries WHERE delivery_id = ?").pluck().get(d.deliveryId) !== "pending") return;
      if (complete) {
        markDelivered(db, output, d.deliveryId, d.runs, now(), "found complete at its output after an interruption");
        settled.delivered.push(d.deliveryId);
      } else {
        db.prepare("UPDATE _deliveries SET status = 'failed', finished_at = ?, error = ? WHERE delivery_id = ?").run(
          now().toISOString(),
          "INTERRUPTED: the delivery was interrupted (its process ended) before its outcome was recorded, and its output is not complete; its runs are delivered again",
          d.deliveryId,
        );
        settled.failed.push(d.deliveryId);
      }
    }).immediate();
  }
  return settled;
}

/**
 * The successful delivery that carried run `runId` to `output`, if any (a snapshot from before the
 * ledger has none).
 */
export function deliveryOf(db: Database, output: string, runId: number): { deliveryId: number; forRun: number; runs: number[] } | undefined {
  let row: { delivery_id: number; for_run: number; runs: string } | undefined;
  try {
    row = db
      // A start recorded on purpose (output-start.ts) carried nothing: it is not a delivery of the run.
      .prepare("SELECT d.delivery_id, d.for_run, d.runs FROM _delivered_runs r JOIN _deliveries d ON d.delivery_id = r.delivery_id WHERE r.output = ? AND r.run_id = ? AND d.runs <> '[]'")
      .get(output, runId) as typeof row;
  } catch {
    return undefined; // no ledger tables yet
  }
  return row && { deliveryId: row.delivery_id, forRun: row.for_run, runs: JSON.parse(row.runs) as number[] };
}

function markDelivered(db: Database, output: string, deliveryId: number, runs: readonly number[], at: Date, note?: string): void {
  const detail = note === undefined ? undefined : JSON.stringify({ ...parseHolder(db.prepare("SELECT detail FROM _deliveries WHERE delivery_id = ?").pluck().get(deliveryId)), note });
  db.prepare("UPDATE _deliveries SET status = 'delivered', finished_at = ?, error = NULL, detail = COALESCE(?, detail) WHERE delivery_id = ?").run(
    at.toISOString(),
    detail ?? null,
    deliveryId,
  );
  // A run another delivery recorded meanwhile keeps its first delivery (only possible when two
  // processes delivered to one output at once, which the in-progress rule avoids).
  const received = db.prepare("INSERT OR IGNORE INTO _delivered_runs (output, run_id, delivery_id) VALUES (?, ?, ?)");
  for (const r of runs) received.run(output, r, deliveryId);
}

/** Deliveries being written by this process, by database file and id. */
const inFlight = new Set<string>();
const inFlightKey = (db: Database, id: number) => `${db.name}\u0000${id}`;

/** How long a pending delivery recorded on another host is taken for live: its process cannot be checked from here. */
const OTHER_HOST_GRACE_MS = 60 * 60 * 1000;

/**
 * Whether a pending delivery is still being written: by this process (it is in flight here), by
 * another live process on this host, or, on another host, for up to an hour after it began.
 */
function inProgress(db: Database, row: { delivery_id: number; started_at: string; detail: string | null }, now: Date): boolean {
  const holder = parseHolder(row.detail);
  if (holder.pid === undefined || holder.host === undefined) return false;
  if (holder.host !== hostname()) return now.getTime() - Date.parse(row.started_at) < OTHER_HOST_GRACE_MS;
  if (holder.pid === process.pid) return inFlight.has(inFlightKey(db, row.delivery_id));
  return processAlive(holder.pid);
}

function parseHolder(detail: unknown): { pid?: number; host?: string } {
  if (typeof detail !== "string") return {};
  try {
    const d = JSON.parse(detail) as { pid?: unknown; host?: unknown };
    return { ...(typeof d.pid === "number" ? { pid: d.pid } : {}), ...(typeof d.host === "string" ? { host: d.host } : {}) };
  } catch {
    return {};
  }
}

function describe(e: unknown): { code: string; message: string } {
  const code = e && typeof e === "object" && typeof (e as { code?: unknown }).code === "string" ? (e as { code: string }).code : "DELIVERY";
  return { code, message: redact(e instanceof Error ? e.message : String(e)) };
}

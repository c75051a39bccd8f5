/**
 * What the sink checks share: the sink under test as its author describes it, the failure they
 * throw, the comparison of what the output holds with what the ledger says it received, a sink
 * made to fail on purpose, and a delivery recorded as a dead process leaves it.
 */
import type { Database } from "better-sqlite3";
import { hostname } from "node:os";
import { pendingRuns, type DeliveryOutcome } from "../sinks/ledger.js";
import type { DeliveryPlan, Sink, SinkSession } from "../sinks/sink.js";
import type { KitSnapshot } from "./kit-snapshot.js";

/** One run whose changes the output holds, as the sink's author reads the output back. */
export interface HeldRun {
  readonly runId: number;
  /** How many changes of that run it holds: one per change a `DeltaReader` gave (of each of `StoredResources`), not child rows such as claim lines. */
  readonly changes: number;
}

/**
 * The sink under test. Each check calls `create` once, for an output of its own that holds
 * nothing yet, and reads it back with `held`.
 */
export interface SinkSubject<R = unknown> {
  /** A sink on a new, empty output (a temp folder, a fresh schema). */
  create(): Sink<R> | Promise<Sink<R>>;
  /**
   * What the output holds: one entry per run whose changes it holds, with how many; a run
   * applied twice shows as two entries (or twice its changes). Runs it holds nothing of are left out.
   */
  held(sink: Sink<R>): Iterable<HeldRun> | Promise<Iterable<HeldRun>>;
  /** Remove the output, once the check is done (pass or fail). */
  dispose?(sink: Sink<R>): void | Promise<void>;
}

/** A check that did not hold: `check` names it, the message says what was seen and what was due. */
export class SinkCheckError extends Error {
  readonly code = "SINK_CHECK";
  constructor(
    readonly check: string,
    message: string,
  ) {
    super(`sink check "${check}": ${message}`);
    this.name = "SinkCheckError";
  }
}

/** The error a check makes the sink throw on purpose (its code is how the check knows it). */
export const INJECTED = "SINK_CHECK_INJECTED";

/** Throw unless the outcome has `status`. */
export function expectOutcome(check: string, step: string, o: DeliveryOutcome<unknown>, status: DeliveryOutcome<unknown>["status"]): void {
  if (o.status === status) return;
  const why = o.error ? ` (${o.error.code}: ${o.error.message})` : "";
  throw new SinkCheckError(check, `${step}: the delivery ended "${o.status}"${why}, expected "${status}"`);
}

/**
 * Throw unless the output holds exactly the runs the ledger records delivered to it, each once
 * and whole, and the ledger lists exactly `pending` as still to deliver.
 */
export async function expectHeld<R>(check: string, step: string, subject: SinkSubject<R>, sink: Sink<R>, snap: KitSnapshot, pending: readonly number[]): Promise<void> {
  const last = lastRun(snap.db);
  const stillPending = pendingRuns(snap.db, sink.output, last);
  if (stillPending.join() !== pending.join()) {
    throw new SinkCheckError(check, `${step}: the ledger lists runs [${stillPending.join(", ")}] as not delivered, expected [${pending.join(", ")}]`);
  }
  const due = new Map<number, number>();
  for (let r = 1; r <= last; r++) if (!pending.includes(r)) due.set(r, snap.changesOf(r));
  const seen = new Map<number, { entries: number; changes: number }>();
  for (const h of await subject.held(sink)) {
    const s = seen.get(h.runId) ?? { entries: 0, changes: 0 };
    seen.set(h.runId, { entries: s.entries + 1, changes: s.changes + h.changes });
  }
  const problems: string[] = [];
  for (const [run, changes] of due) {
    const s = seen.get(run);
    if (!s) problems.push(`run ${run} is missing (the ledger records it delivered: its ${changes} changes are lost)`);
    else if (s.entries > 1 || s.changes > changes) problems.push(`run ${run} is there more than once (${s.entries} entries, ${s.changes} changes of its ${changes})`);
    else if (s.changes < changes) problems.push(`run ${run} is partly there (${s.changes} of its ${changes} changes)`);
  }
  for (const [run, s] of seen) {
    if (!due.has(run)) problems.push(`run ${run} is there (${s.changes} changes) though the ledger does not record it delivered: ${pending.includes(run) ? "a delivery that failed left it behind" : "no such run"}`);
  }
  if (problems.length) throw new SinkCheckError(check, `${step}: the output does not hold exactly the delivered runs, each once and whole: ${problems.join("; ")}`);
}

export function lastRun(db: Database): number {
  return (db.prepare("SELECT COALESCE(MAX(run_id), 0) FROM _runs").pluck().get() as number) ?? 0;
}

/**
 * The sink, with its sessions made to fail on purpose where `fault` says: before writing the
 * second resource (a delivery that dies half written), or at commit (before the sink's own commit
 * runs). Only sessions whose plan `when` picks fail; `arrived` may be overridden.
 */
export function faultySink<R>(
  sink: Sink<R>,
  fault: { readonly at?: "write" | "commit"; readonly when?: (plan: DeliveryPlan) => boolean; readonly arrived?: boolean },
): Sink<R> {
  const wrapped: Sink<R> = {
    get output() {
      return sink.output;
    },
    get describe() {
      return sink.describe;
    },
    ...(sink.perRun !== undefined ? { perRun: sink.perRun } : {}),
    arrived: (d) => (fault.arrived !== undefined ? fault.arrived : sink.arrived(d)),
    ...(sink.prepare ? { prepare: (id: string | undefined) => sink.prepare!(id) } : {}),
    async open(plan) {
      const session = await sink.open(plan);
      if (!fault.at || !(fault.when?.(plan) ?? true)) return session;
      return failingSession(session, fault.at);
    },
  };
  return wrapped;
}

function failingSession<R>(session: SinkSession<R>, at: "write" | "commit"): SinkSession<R> {
  let writes = 0;
  const fail = (where: string) => Object.assign(new Error(`a failure the sink check planned (${where})`), { code: INJECTED });
  return {
    async write(resource, deltas) {
      if (at === "write" && ++writes === 2) throw fail(`before writing ${resource}`);
      await session.write(resource, deltas);
    },
    async commit() {
      if (at === "commit") throw fail("at commit");
      return session.commit();
    },
    close: () => session.close(),
  };
}

/**
 * Record a pending delivery of `plan.runs` to the sink's output as a process that died leaves
 * it: on another host, two hours ago, so the next delivery takes it for dead and settles it.
 */
export function recordInterrupted(db: Database, output: string, plan: DeliveryPlan, now: Date = new Date()): void {
  const at = new Date(now.getTime() - 2 * 60 * 60 * 1000).toISOString();
  const holder = JSON.stringify({ pid: process.pid, host: `${hostname()}-a-dead-host-of-the-sink-check` });
  db.prepare("INSERT INTO _deliveries (output, for_run, runs, status, started_at, detail) VALUES (?, ?, ?, 'pending', ?, ?)").run(
    output,
    plan.folderRun,
    JSON.stringify(plan.runs),
    at,
    holder,
  );
}

/**
 * When a run is dead, and how a run claims the snapshot. A run holds the snapshot by a lease that
 * it renews with every commit and while it waits on the network. A run is dead when its lease has
 * lapsed (killed, or its container restarted with a new hostname: nothing on this host can see
 * its process), when its process is gone from this host, or when it was abandoned by hand.
 * Checking for a live run and claiming the snapshot happen in one IMMEDIATE transaction, so two
 * starts that overlap cannot both proceed.
 */
import type { Database } from "better-sqlite3";
import { hostname } from "node:os";
import { SnapshotBusyError } from "../../errors.js";
import type { RunRow } from "./run-log.js";

/** A run's lease: 2 minutes, renewed with every commit and while the walk waits on the network. */
export const DEFAULT_LEASE_MS = 120_000;

export interface LeaseHolder {
  /** This store instance's identity (random): its own runs are never "another process's". */
  readonly owner: string;
  readonly leaseMs: number;
  readonly now: () => Date;
}

/** Whether a process id is alive on this host (signal 0 checks without signalling). */
export function processAlive(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch (e) {
    return (e as NodeJS.ErrnoException).code === "EPERM";
  }
}

/**
 * Why a `running` row is dead, or undefined while it may be alive. `hasActiveRun` tells whether
 * this store instance is itself in the middle of a run (then its own row is alive).
 */
export function deadReason(row: Pick<RunRow, "owner" | "pid" | "host" | "lease_until" | "started_at">, self: LeaseHolder, hasActiveRun: boolean): string | undefined {
  if (row.owner !== null && row.owner === self.owner && !hasActiveRun) return "its store stopped before the run finished";
  if (row.host === hostname() && row.pid !== null && row.pid !== process.pid && !processAlive(row.pid)) {
    return `the process (pid ${row.pid}) ended before the run finished`;
  }
  // A row from before leases existed counts from its start.
  const until = row.lease_until ?? new Date(Date.parse(row.started_at) + self.leaseMs).toISOString();
  if (Date.parse(until) < self.now().getTime()) {
    return `its lease lapsed at ${until} with no heartbeat (the process was killed, or its host or container went away)`;
  }
  return undefined;
}

/** The lease time from now. */
export function leaseUntil(self: LeaseHolder): string {
  return new Date(self.now().getTime() + self.leaseMs).toISOString();
}

/**
 * Mark dead runs failed (their cached pages are dropped: a failed run's pages are never trusted),
 * then refuse with {@link SnapshotBusyError} if a live run remains. Call inside the transaction
 * that claims the snapshot.
 */
export function reapOrRefuse(db: Database, self: LeaseHolder, hasActiveRun: boolean): number[] {
  const running = db.prepare("SELECT * FROM _runs WHERE status = 'running'").all() as RunRow[];
  const now = self.now().toISOString();
  const reaped: number[] = [];
  for (const row of running) {
    const why = deadReason(row, self, hasActiveRun);
    if (why === undefined) throw heldBy(row);
    markFailed(db, row.run_id, now, `ABANDONED: ${why}`);
    reaped.push(row.run_id);
  }
  return reaped;
}

/** The refusal that names the live run holding the snapshot: its id, pid, host and start, its lease, and what to do. */
function heldBy(row: RunRow): SnapshotBusyError {
  return new SnapshotBusyError(
    `run ${row.run_id} (pid ${row.pid ?? "?"} on ${row.host ?? "?"}, started ${row.started_at}) holds this snapshot until ${row.lease_until ?? "its lease ends"}; ` +
      `try again later. If you know that run is dead, end it with: benefits-sync runs --abandon ${row.run_id}`,
    row.run_id,
  );
}

/**
 * Refuse with {@link SnapshotBusyError} when a live run holds the snapshot, by reading only: a
 * plain read never waits for the writer, so a second process learns at once (and changes nothing)
 * even while that run keeps the write lock through a wait on the network.
 */
export function refuseIfHeld(db: Database, self: LeaseHolder): void {
  const running = db.prepare("SELECT * FROM _runs WHERE status = 'running'").all() as RunRow[];
  const live = running.find((row) => deadReason(row, self, false) === undefined);
  if (live) throw heldBy(live);
}

/**
 * Why the write lock could not be had (SQLite's SQLITE_BUSY after its busy timeout): the live run
 * that holds the snapshot, or else another program's open write transaction.
 */
export function lockedError(db: Database, self: LeaseHolder): SnapshotBusyError {
  try {
    refuseIfHeld(db, self);
  } catch (e) {
    if (e instanceof SnapshotBusyError) return e;
  }
  return lockedByOther(db.name);
}

/** The refusal when no live run holds the snapshot but another program holds its write lock. */
export function lockedByOther(path: string): SnapshotBusyError {
  return new SnapshotBusyError(
    `the snapshot is locked by another process (not a benefits-sync run): ${path} has an open write transaction ` +
      "(an analyst's BEGIN in sqlite3, a script, a `benefits-sync pii rekey` rewriting it); nothing was changed. End that transaction or let it finish, then try again later",
    undefined,
  );
}

/** SQLite's answer when a write lock stayed taken past the busy timeout (with its extended codes). */
export const isBusy = (e: unknown): boolean => String((e as { code?: unknown } | null)?.code).startsWith("SQLITE_BUSY");

/**
 * End a `running` run by hand: it is recorded failed and its walk can be resumed. Refuses a run
 * that is not running. Returns the run's previous lease, for the message.
 *
 * @example abandonRun(db, 7, new Date()) // run 7 is now failed, "ABANDONED: abandoned by hand ..."
 */
export function abandonRun(db: Database, runId: number, now: Date): { leaseUntil: string | null } {
  return db.transaction(() => {
    const row = db.prepare("SELECT status, lease_until FROM _runs WHERE run_id = ?").get(runId) as { status: string; lease_until: string | null } | undefined;
    if (!row) throw new Error(`there is no run ${runId} in this snapshot`);
    if (row.status !== "running") throw new Error(`run ${runId} is not running (it ${row.status}); nothing to abandon`);
    markFailed(db, runId, now.toISOString(), `ABANDONED: abandoned by hand at ${now.toISOString()} (benefits-sync runs --abandon)`);
    return { leaseUntil: row.lease_until };
  }).immediate();
}

function markFailed(db: Database, runId: number, now: string, error: string): void {
  db.prepare("UPDATE _runs SET status = 'failed', finished_at = ?, error = ? WHERE run_id = ?").run(now, error, runId);
  db.prepare("DELETE FROM _pages WHERE run_id = ?").run(runId);
}

/** The identity of this host and process, for a new run's row. */
export const hostIdentity = (): { pid: number; host: string } => ({ pid: process.pid, host: hostname() });

/**
 * The lease's refusals, asked directly (the mutation run of 2026-11-26 found them reached by no
 * test it runs): who is told the snapshot is busy, what the message names, which SQLite codes
 * count as "busy", and a process that exists but is not ours to signal. Expected values are
 * written out here, never computed by the lease module.
 */
import { hostname } from "node:os";
import { afterEach, describe, expect, it, vi } from "vitest";
import { SnapshotBusyError } from "../../../src/errors.js";
import { deadReason, isBusy, lockedByOther, lockedError, processAlive, refuseIfHeld, type LeaseHolder } from "../../../src/store/runs/run-lease.js";
import { useTempStores } from "../../helpers/temp-store.js";

const NOW = "2026-03-01T12:00:00.000Z";
const self: LeaseHolder = { owner: "me", leaseMs: 60_000, now: () => new Date(NOW) };

describe("the lease's refusals", () => {
  const setup = useTempStores();
  afterEach(() => vi.restoreAllMocks());

  const running = (db: ReturnType<typeof setup>["db"], leaseUntil: string, host = "elsewhere", pid: number | null = 4242) =>
    Number(
      db
        .prepare("INSERT INTO _runs (job, status, started_at, options, owner, lease_until, pid, host) VALUES ('sync', 'running', '2026-03-01T11:59:00.000Z', '{}', 'other', ?, ?, ?)")
        .run(leaseUntil, pid, host).lastInsertRowid,
    );

  it("refuseIfHeld: nothing running, or only a dead run, passes; a live run is refused, named with how to end it", () => {
    const { db } = setup();
    expect(() => refuseIfHeld(db, self)).not.toThrow();
    running(db, "2026-03-01T11:59:59.999Z"); // lapsed a millisecond ago
    expect(() => refuseIfHeld(db, self)).not.toThrow();
    const id = running(db, "2026-03-01T12:00:30.000Z");
    let err: unknown;
    try {
      refuseIfHeld(db, self);
    } catch (e) {
      err = e;
    }
    expect(err).toBeInstanceOf(SnapshotBusyError);
    expect((err as SnapshotBusyError).runId).toBe(id);
    expect((err as Error).message).toBe(
      `run ${id} (pid 4242 on elsewhere, started 2026-03-01T11:59:00.000Z) holds this snapshot until 2026-03-01T12:00:30.000Z; ` +
        `try again later. If you know that run is dead, end it with: benefits-sync runs --abandon ${id}`,
    );
  });

  it("refuseIfHeld: a running row this very store left (it holds no active run) is dead, whatever its lease", () => {
    const { db } = setup();
    db.prepare("INSERT INTO _runs (job, status, started_at, options, owner, lease_until, pid, host) VALUES ('sync', 'running', '2026-03-01T11:59:00.000Z', '{}', 'me', '2026-03-01T12:00:30.000Z', 4242, 'elsewhere')").run();
    expect(() => refuseIfHeld(db, self)).not.toThrow();
  });

  it("lockedError: the live run when there is one, else another program's open write transaction, named by the file", () => {
    const { db, path } = setup();
    const other = lockedError(db, self);
    expect(other).toBeInstanceOf(SnapshotBusyError);
    expect(other.runId).toBeUndefined();
    expect(other.message).toBe(
      `the snapshot is locked by another process (not a benefits-sync run): ${path} has an open write transaction ` +
        "(an analyst's BEGIN in sqlite3, a script, a `benefits-sync pii rekey` rewriting it); nothing was changed. End that transaction or let it finish, then try again later",
    );
    expect(lockedByOther("/x/y.db").message).toContain("/x/y.db has an open write transaction");
    const id = running(db, "2026-03-01T12:00:30.000Z");
    const held = lockedError(db, self);
    expect(held.runId).toBe(id);
    expect(held.message).toMatch(new RegExp(`^run ${id} \\(pid 4242 on elsewhere`));
  });

  it("isBusy: SQLITE_BUSY and its extended codes; nothing else, and no code at all, is not busy", () => {
    expect(isBusy({ code: "SQLITE_BUSY" })).toBe(true);
    expect(isBusy({ code: "SQLITE_BUSY_SNAPSHOT" })).toBe(true);
    expect(isBusy({ code: "SQLITE_BUSY_RECOVERY" })).toBe(true);
    expect(isBusy({ code: "SQLITE_LOCKED" })).toBe(false);
    expect(isBusy({ code: "X_SQLITE_BUSY" })).toBe(false);
    expect(isBusy({ code: "SQLITE_IOERR" })).toBe(false);
    expect(isBusy({})).toBe(false);
    expect(isBusy(null)).toBe(false);
    expect(isBusy(new Error("SQLITE_BUSY"))).toBe(false);
  });

  it("processAlive: a process we may not signal (EPERM) is alive; one that does not exist (ESRCH) is not", () => {
    const kill = vi.spyOn(process, "kill");
    kill.mockImplementation(() => {
      throw Object.assign(new Error("operation not permitted"), { code: "EPERM" });
    });
    expect(processAlive(1234)).toBe(true);
    kill.mockImplementation(() => {
      throw Object.assign(new Error("no such process"), { code: "ESRCH" });
    });
    expect(processAlive(1234)).toBe(false);
    kill.mockImplementation(() => true);
    expect(processAlive(1234)).toBe(true);
    expect(kill).toHaveBeenLastCalledWith(1234, 0);
  });

  it("deadReason: a run on another host, or this very process, is judged by its lease alone, whatever its pid", () => {
    const kill = vi.spyOn(process, "kill").mockImplementation(() => {
      throw Object.assign(new Error("no such process"), { code: "ESRCH" });
    });
    const live = { owner: "other", lease_until: "2026-03-01T12:00:30.000Z", started_at: "2026-03-01T11:59:00.000Z" };
    expect(deadReason({ ...live, host: "elsewhere", pid: 4242 }, self, false)).toBeUndefined();
    expect(deadReason({ ...live, host: hostname(), pid: process.pid }, self, false)).toBeUndefined();
    expect(deadReason({ ...live, host: hostname(), pid: null }, self, false)).toBeUndefined();
    expect(deadReason({ ...live, host: hostname(), pid: 4242 }, self, false)).toBe("the process (pid 4242) ended before the run finished");
    expect(kill).toHaveBeenCalledTimes(1);
  });
});

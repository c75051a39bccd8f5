/**
 * The run lease's rule, asked directly with a fake clock: when a `running` row is dead (and why),
 * where a lease ends, what reaping does to the rows, and what abandoning by hand refuses. Expected
 * values are written out here (times, messages), never computed by the lease module.
 */
import { hostname } from "node:os";
import { describe, expect, it } from "vitest";
import { SnapshotBusyError } from "../../../src/errors.js";
import { abandonRun, deadReason, hostIdentity, leaseUntil, processAlive, reapOrRefuse, type LeaseHolder } from "../../../src/store/runs/run-lease.js";
import { useTempStores } from "../../helpers/temp-store.js";

const NOW = "2026-03-01T12:00:00.000Z";
const self: LeaseHolder = { owner: "me", leaseMs: 60_000, now: () => new Date(NOW) };
/** A pid no process has: above the kernel's pid_max (4194304 at most). */
const GONE_PID = 99_999_999;

function row(over: Partial<{ owner: string | null; pid: number | null; host: string | null; lease_until: string | null; started_at: string }>) {
  return { owner: "other", pid: null, host: "elsewhere", lease_until: "2026-03-01T12:00:30.000Z", started_at: "2026-03-01T11:59:50.000Z", ...over };
}

describe("the run lease", () => {
  it("a lease that ends exactly now is still held; one millisecond earlier it has lapsed", () => {
    expect(deadReason(row({ lease_until: NOW }), self, false)).toBeUndefined();
    expect(deadReason(row({ lease_until: "2026-03-01T11:59:59.999Z" }), self, false)).toBe(
      "its lease lapsed at 2026-03-01T11:59:59.999Z with no heartbeat (the process was killed, or its host or container went away)",
    );
  });

  it("a row from before leases counts its lease from its start", () => {
    // Started 60 s before now: its lease ends exactly now (held); 60.001 s before: lapsed.
    expect(deadReason(row({ lease_until: null, started_at: "2026-03-01T11:59:00.000Z" }), self, false)).toBeUndefined();
    expect(deadReason(row({ lease_until: null, started_at: "2026-03-01T11:58:59.999Z" }), self, false)).toBe(
      "its lease lapsed at 2026-03-01T11:59:59.999Z with no heartbeat (the process was killed, or its host or container went away)",
    );
  });

  it("this store's own row is dead only when the store has no run going", () => {
    expect(deadReason(row({ owner: "me" }), self, false)).toBe("its store stopped before the run finished");
    expect(deadReason(row({ owner: "me" }), self, true)).toBeUndefined();
    // Another owner's row with a live lease is alive, whatever this store does.
    expect(deadReason(row({ owner: "other" }), self, false)).toBeUndefined();
    expect(deadReason(row({ owner: null }), { ...self, owner: null as unknown as string }, false)).toBeUndefined();
  });

  it("a process gone from this host ends its run; the same pid on another host, or this process, does not", () => {
    expect(deadReason(row({ host: hostname(), pid: GONE_PID }), self, false)).toBe(`the process (pid ${GONE_PID}) ended before the run finished`);
    expect(deadReason(row({ host: "elsewhere", pid: GONE_PID }), self, false)).toBeUndefined();
    expect(deadReason(row({ host: hostname(), pid: process.pid }), self, false)).toBeUndefined();
    expect(deadReason(row({ host: hostname(), pid: null }), self, false)).toBeUndefined();
  });

  it("processAlive: this process is, a pid no process has is not", () => {
    expect(processAlive(process.pid)).toBe(true);
    expect(processAlive(GONE_PID)).toBe(false);
  });

  it("the lease runs leaseMs from now", () => {
    expect(leaseUntil(self)).toBe("2026-03-01T12:01:00.000Z");
    expect(hostIdentity()).toEqual({ pid: process.pid, host: hostname() });
  });

  const setup = useTempStores();
  const cachePage = (db: ReturnType<typeof setup>["db"], runId: number) =>
    db.prepare("INSERT INTO _pages (scope, cursor, fp, ids, run_id) VALUES ('designs', @cursor, 0, '[]', @runId)").run({ cursor: `c${runId}`, runId });
  const insert = (db: ReturnType<typeof setup>["db"], r: { status: string; owner: string; lease_until: string; pid?: number; host?: string }) =>
    Number(
      db
        .prepare("INSERT INTO _runs (job, status, started_at, options, owner, lease_until, pid, host) VALUES ('sync', ?, '2026-03-01T11:00:00.000Z', '{}', ?, ?, ?, ?)")
        .run(r.status, r.owner, r.lease_until, r.pid ?? null, r.host ?? null).lastInsertRowid,
    );

  it("reaping marks dead runs failed and drops their cached pages; a live run is refused with how to end it", () => {
    const { db } = setup();
    const dead = insert(db, { status: "running", owner: "other", lease_until: "2026-03-01T11:30:00.000Z" });
    const done = insert(db, { status: "succeeded", owner: "other", lease_until: "2026-03-01T11:30:00.000Z" });
    cachePage(db, dead);
    cachePage(db, done);
    expect(reapOrRefuse(db, self, false)).toEqual([dead]);
    expect(db.prepare("SELECT run_id, status, finished_at, error FROM _runs ORDER BY run_id").all()).toEqual([
      { run_id: dead, status: "failed", finished_at: NOW, error: "ABANDONED: its lease lapsed at 2026-03-01T11:30:00.000Z with no heartbeat (the process was killed, or its host or container went away)" },
      { run_id: done, status: "succeeded", finished_at: null, error: null },
    ]);
    expect(db.prepare("SELECT run_id FROM _pages").pluck().all()).toEqual([done]);

    const live = insert(db, { status: "running", owner: "other", lease_until: "2026-03-01T12:05:00.000Z", pid: 4242, host: "box-2" });
    let thrown: unknown;
    try {
      reapOrRefuse(db, self, false);
    } catch (e) {
      thrown = e;
    }
    expect(thrown).toBeInstanceOf(SnapshotBusyError);
    expect((thrown as SnapshotBusyError).runId).toBe(live);
    expect((thrown as Error).message).toBe(
      `run ${live} (pid 4242 on box-2, started 2026-03-01T11:00:00.000Z) holds this snapshot until 2026-03-01T12:05:00.000Z; try again later. If you know that run is dead, end it with: benefits-sync runs --abandon ${live}`,
    );
    expect(db.prepare("SELECT status FROM _runs WHERE run_id = ?").pluck().get(live)).toBe("running");

    // A live run from before leases, with no pid or host recorded: the message says what it knows.
    db.prepare("UPDATE _runs SET status = 'failed' WHERE run_id = ?").run(live);
    const old = Number(
      db.prepare("INSERT INTO _runs (job, status, started_at, options) VALUES ('sync', 'running', '2026-03-01T11:59:30.000Z', '{}')").run().lastInsertRowid,
    );
    expect(() => reapOrRefuse(db, self, false)).toThrow(`run ${old} (pid ? on ?, started 2026-03-01T11:59:30.000Z) holds this snapshot until its lease ends; try again later.`);
  });

  it("abandoning by hand fails a running run and keeps its pages out; a finished or unknown run is refused", () => {
    const { db } = setup();
    const r = insert(db, { status: "running", owner: "other", lease_until: "2026-03-01T12:05:00.000Z" });
    cachePage(db, r);
    expect(abandonRun(db, r, new Date(NOW))).toEqual({ leaseUntil: "2026-03-01T12:05:00.000Z" });
    expect(db.prepare("SELECT status, finished_at, error FROM _runs WHERE run_id = ?").get(r)).toEqual({
      status: "failed",
      finished_at: NOW,
      error: `ABANDONED: abandoned by hand at ${NOW} (benefits-sync runs --abandon)`,
    });
    expect(db.prepare("SELECT COUNT(*) FROM _pages").pluck().get()).toBe(0);
    expect(() => abandonRun(db, r, new Date(NOW))).toThrow(`run ${r} is not running (it failed); nothing to abandon`);
    expect(() => abandonRun(db, r + 1, new Date(NOW))).toThrow(`there is no run ${r + 1} in this snapshot`);
  });
});

/**
 * The delivery ledger's rule, asked directly on a real snapshot file whose runs are written here
 * (no sync, no files): which runs are pending, what a delivery records on success and on failure,
 * one run at a time, and how an interrupted delivery is settled. Every expected row is written out.
 */
import { hostname } from "node:os";
import { describe, expect, it } from "vitest";
import { deliver, deliverEach, deliveryOf, pendingRuns, settleInterrupted } from "../../../src/sinks/ledger.js";
import { useTempStores } from "../../helpers/temp-store.js";

const NOW = "2026-03-01T12:00:00.000Z";
const now = () => new Date(NOW);
/** A pid no process has: above the kernel's pid_max. */
const GONE_PID = 99_999_999;

describe("the delivery ledger, directly", () => {
  const setup = useTempStores();
  /** Runs 1 succeeded, 2 failed, 3 running, 4 succeeded. */
  function runs() {
    const t = setup();
    const add = t.db.prepare("INSERT INTO _runs (job, status, started_at, options) VALUES ('sync', ?, '2026-03-01T00:00:00.000Z', '{}')");
    for (const s of ["succeeded", "failed", "running", "succeeded"]) add.run(s);
    return t.db;
  }
  const deliveries = (db: ReturnType<typeof runs>) => db.prepare("SELECT delivery_id, output, for_run, runs, status, started_at, finished_at, error, detail FROM _deliveries ORDER BY delivery_id").all();
  const received = (db: ReturnType<typeof runs>) => db.prepare("SELECT output, run_id, delivery_id FROM _delivered_runs ORDER BY output, run_id").all();
  const pending = (db: ReturnType<typeof runs>, output: string, forRun: number, runIds: number[], detail: string | null, startedAt = NOW) =>
    Number(
      db
        .prepare("INSERT INTO _deliveries (output, for_run, runs, status, started_at, detail) VALUES (?, ?, ?, 'pending', ?, ?)")
        .run(output, forRun, JSON.stringify(runIds), startedAt, detail).lastInsertRowid,
    );

  it("pendingRuns: finished runs up to a run, ascending, never a running one, at most `limit`", () => {
    const db = runs();
    expect(pendingRuns(db, "o", 4)).toEqual([1, 2, 4]);
    expect(pendingRuns(db, "o", 2)).toEqual([1, 2]);
    expect(pendingRuns(db, "o", 4, 2)).toEqual([1, 2]);
  });

  it("a delivery records what it carried, once; the next has nothing; another output has its own", async () => {
    const db = runs();
    const seen: (readonly number[])[] = [];
    const o = await deliver(db, "o", 4, (r) => (seen.push(r), "done"), now);
    expect(seen).toEqual([[1, 2, 4]]);
    expect(o).toEqual({ status: "delivered", deliveryId: 1, runs: [1, 2, 4], value: "done" });
    expect(deliveries(db)).toEqual([
      { delivery_id: 1, output: "o", for_run: 4, runs: "[1,2,4]", status: "delivered", started_at: NOW, finished_at: NOW, error: null, detail: JSON.stringify({ pid: process.pid, host: hostname() }) },
    ]);
    expect(received(db)).toEqual([1, 2, 4].map((run_id) => ({ output: "o", run_id, delivery_id: 1 })));
    expect(await deliver(db, "o", 4, () => "again", now)).toEqual({ status: "nothing", runs: [] });
    expect(deliveryOf(db, "o", 2)).toEqual({ deliveryId: 1, forRun: 4, runs: [1, 2, 4] });
    expect(deliveryOf(db, "p", 2)).toBeUndefined();
    expect(pendingRuns(db, "p", 4)).toEqual([1, 2, 4]);
  });

  it("a failed write is recorded failed with its code (DELIVERY without one), and its runs stay pending", async () => {
    const db = runs();
    const o = await deliver(db, "o", 2, () => { throw Object.assign(new Error("no room"), { code: "ENOSPC" }); }, now);
    expect(o).toEqual({ status: "failed", deliveryId: 1, runs: [1, 2], error: { code: "ENOSPC", message: "no room" } });
    const o2 = await deliver(db, "o", 2, () => { throw "just text"; }, now);
    expect(o2.error).toEqual({ code: "DELIVERY", message: "just text" });
    expect(deliveries(db)).toMatchObject([
      { delivery_id: 1, status: "failed", finished_at: NOW, error: "ENOSPC: no room" },
      { delivery_id: 2, status: "failed", finished_at: NOW, error: "DELIVERY: just text" },
    ]);
    expect(received(db)).toEqual([]);
    expect(pendingRuns(db, "o", 4)).toEqual([1, 2, 4]);
  });

  it("deliverEach takes each run on its own, oldest first, and stops at the first failure", async () => {
    const db = runs();
    const o = await deliverEach(db, "o", 2, ([r]) => `v${r}`, now);
    expect(o).toEqual({ status: "delivered", deliveryId: 2, runs: [1, 2], values: ["v1", "v2"], value: "v2" });
    expect(deliveries(db)).toMatchObject([
      { delivery_id: 1, for_run: 1, runs: "[1]", status: "delivered" },
      { delivery_id: 2, for_run: 2, runs: "[2]", status: "delivered" },
    ]);
    db.prepare("INSERT INTO _runs (job, status, started_at, options) VALUES ('sync', 'succeeded', ?, '{}')").run(NOW); // run 5
    const failed = await deliverEach(db, "o", 5, ([r]) => { if (r === 5) throw new Error("five"); return `v${r}`; }, now);
    expect(failed).toMatchObject({ status: "failed", runs: [5], delivered: [4], values: ["v4"], error: { message: "five" } });
    expect(await deliverEach(db, "q", 0, () => "x", now)).toEqual({ status: "nothing", runs: [] });
    // A failure before the last run: every run from it on is still pending.
    const early = await deliverEach(db, "r", 5, ([r]) => { if (r === 4) throw new Error("four"); return `v${r}`; }, now);
    expect(early).toMatchObject({ status: "failed", runs: [4, 5], delivered: [1, 2], values: ["v1", "v2"] });
  });

  it("an interrupted delivery is settled: delivered when its output is complete, failed otherwise; a live one is left", async () => {
    const db = runs();
    const here = (pid: number) => JSON.stringify({ pid, host: hostname() });
    const complete = pending(db, "o", 1, [1], here(GONE_PID));
    const broken = pending(db, "o", 2, [2], here(GONE_PID));
    const throws = pending(db, "o", 4, [4], null);
    const live = pending(db, "o", 4, [4], here(process.pid === 1 ? 2 : 1)); // pid 1 is alive
    const away = pending(db, "o", 4, [4], JSON.stringify({ pid: 5, host: "elsewhere" }), "2026-03-01T11:00:00.001Z");
    const gone = pending(db, "o", 4, [4], JSON.stringify({ pid: 5, host: "elsewhere" }), "2026-03-01T11:00:00.000Z");
    const settled = await settleInterrupted(db, "o", (d) => {
      if (d.deliveryId === throws) throw new Error("cannot look");
      return d.deliveryId === complete;
    }, now);
    expect(settled).toEqual({ delivered: [complete], failed: [broken, throws, gone] });
    const rows = deliveries(db) as { delivery_id: number; status: string; error: string | null; detail: string | null }[];
    const byId = new Map(rows.map((r) => [r.delivery_id, r]));
    expect(byId.get(complete)).toMatchObject({ status: "delivered", error: null, finished_at: NOW });
    expect(JSON.parse(byId.get(complete)!.detail!)).toEqual({ pid: GONE_PID, host: hostname(), note: "found complete at its output after an interruption" });
    expect(byId.get(broken)).toMatchObject({ status: "failed", finished_at: NOW });
    expect(byId.get(broken)!.error).toBe(
      "INTERRUPTED: the delivery was interrupted (its process ended) before its outcome was recorded, and its output is not complete; its runs are delivered again",
    );
    expect(byId.get(live)!.status).toBe("pending");
    expect(byId.get(away)!.status).toBe("pending");
    expect(received(db)).toEqual([{ output: "o", run_id: 1, delivery_id: complete }]);
  });

  it("a holder with only a pid or only a host, or this process's own delivery not being written now, is settled; the one being written is left", async () => {
    const db = runs();
    const pidOnly = pending(db, "o", 1, [1], JSON.stringify({ pid: process.pid }));
    const hostOnly = pending(db, "o", 1, [1], JSON.stringify({ host: hostname() }));
    const ownIdle = pending(db, "o", 2, [2], JSON.stringify({ pid: process.pid, host: hostname() }));
    let during: { delivered: number[]; failed: number[] } | undefined;
    let idleBeside = -1;
    const o = await deliver(db, "p", 4, async () => {
      // Delivery 4 is being written here; 5, recorded by this process too, is not.
      idleBeside = pending(db, "p", 4, [4], JSON.stringify({ pid: process.pid, host: hostname() }));
      during = await settleInterrupted(db, "p", () => false, now);
      return "w";
    }, now);
    expect(o).toMatchObject({ status: "delivered", deliveryId: 4 });
    expect(idleBeside).toBe(5);
    expect(during).toEqual({ delivered: [], failed: [5] });
    expect(await settleInterrupted(db, "o", () => false, now)).toEqual({ delivered: [], failed: [pidOnly, hostOnly, ownIdle] });
  });

  it("one run at a time skips the runs a live delivery holds and takes the next pending one", async () => {
    const db = runs();
    pending(db, "o", 1, [1], JSON.stringify({ pid: 5, host: "elsewhere" })); // begun just now on another host: live
    const o = await deliver(db, "o", 4, (r) => r.join(","), now, { oneRun: true });
    expect(o).toEqual({ status: "delivered", deliveryId: 2, runs: [2], value: "2" });
    expect(deliveries(db)).toMatchObject([{ delivery_id: 1, status: "pending" }, { delivery_id: 2, for_run: 2, runs: "[2]", status: "delivered" }]);
  });

  it("a write that landed but could not be recorded says so (LEDGER) and stays pending for the next delivery to settle", async () => {
    const db = runs();
    db.exec("CREATE TRIGGER no_receipts BEFORE INSERT ON _delivered_runs BEGIN SELECT RAISE(ABORT, 'disk I/O error'); END");
    const o = await deliver(db, "o", 1, () => "written", now);
    expect(o).toEqual({
      status: "failed",
      deliveryId: 1,
      runs: [1],
      value: "written",
      error: { code: "LEDGER", message: "the deltas were written, but the delivery could not be recorded (disk I/O error); the next delivery settles it" },
    });
    expect(deliveries(db)).toMatchObject([{ delivery_id: 1, status: "pending", finished_at: null }]);
    expect(received(db)).toEqual([]);
  });

  it("a failed write whose failure cannot be recorded is left pending; deliveryOf on a snapshot with no ledger tables is undefined", async () => {
    const db = runs();
    db.exec("CREATE TRIGGER no_outcome BEFORE UPDATE ON _deliveries BEGIN SELECT RAISE(ABORT, 'locked'); END");
    const o = await deliver(db, "o", 1, () => { throw new Error("no room"); }, now);
    expect(o).toEqual({ status: "failed", deliveryId: 1, runs: [1], error: { code: "DELIVERY", message: "no room" } });
    expect(deliveries(db)).toMatchObject([{ delivery_id: 1, status: "pending", error: null }]);
    // Its write is over: the next settle in this same process takes it for interrupted.
    db.exec("DROP TRIGGER no_outcome");
    expect(await settleInterrupted(db, "o", () => false, now)).toEqual({ delivered: [], failed: [1] });
    db.exec("DROP TABLE _delivered_runs");
    expect(deliveryOf(db, "o", 1)).toBeUndefined();
  });

  it("a delivery first settles an interrupted one as failed and carries its runs again; one run at a time takes the oldest even when a later one is held", async () => {
    const db = runs();
    pending(db, "o", 1, [1], JSON.stringify({ pid: GONE_PID, host: hostname() })); // interrupted
    pending(db, "o", 4, [4], JSON.stringify({ pid: 5, host: "elsewhere" })); // begun just now on another host: live
    const o = await deliver(db, "o", 4, (r) => r.join(","), now, { oneRun: true });
    expect(o).toEqual({ status: "delivered", deliveryId: 3, runs: [1], value: "1" });
    expect(deliveries(db)).toMatchObject([{ delivery_id: 1, status: "failed" }, { delivery_id: 2, status: "pending" }, { delivery_id: 3, runs: "[1]", status: "delivered" }]);
  });

  it("without a clock given, each call records the time it runs at", async () => {
    const db = runs();
    expect(await deliver(db, "o", 1, () => "w")).toMatchObject({ status: "delivered", runs: [1] });
    expect(await deliverEach(db, "o", 2, () => "w")).toMatchObject({ status: "delivered", runs: [2] });
    pending(db, "o", 4, [4], JSON.stringify({ pid: GONE_PID, host: hostname() }));
    expect(await settleInterrupted(db, "o", () => false)).toEqual({ delivered: [], failed: [3] });
    for (const r of deliveries(db) as { started_at: string; finished_at: string }[]) expect(Number.isNaN(Date.parse(r.finished_at))).toBe(false);
  });

  it("an interrupted delivery another process settled meanwhile is left as it is", async () => {
    const db = runs();
    const id = pending(db, "o", 1, [1], JSON.stringify({ pid: GONE_PID, host: hostname() }));
    const settled = await settleInterrupted(db, "o", (d) => {
      db.prepare("UPDATE _deliveries SET status = 'delivered', finished_at = 'then' WHERE delivery_id = ?").run(d.deliveryId);
      return false;
    }, now);
    expect(settled).toEqual({ delivered: [], failed: [] });
    expect(deliveries(db)).toMatchObject([{ delivery_id: id, status: "delivered", finished_at: "then", error: null }]);
  });

  it("a holder that is not JSON, or whose pid is not a number or host not a string, holds nothing", async () => {
    const db = runs();
    const ids = [
      pending(db, "o", 1, [1], "not json"),
      pending(db, "o", 1, [1], JSON.stringify({ pid: "1", host: hostname() })), // pid 1 is alive, but as text it is no pid
      pending(db, "o", 1, [1], JSON.stringify({ pid: 1, host: 5 })),
    ];
    expect(await settleInterrupted(db, "o", () => false, now)).toEqual({ delivered: [], failed: ids });
  });

  it("a write that throws something other than an Error is recorded failed (DELIVERY) with its text", async () => {
    const db = runs();
    const o = await deliver(db, "o", 1, () => { throw null; }, now);
    expect(o).toEqual({ status: "failed", deliveryId: 1, runs: [1], error: { code: "DELIVERY", message: "null" } });
  });
});

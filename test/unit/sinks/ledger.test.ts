import { existsSync, mkdtempSync, readdirSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterEach, describe, expect, it } from "vitest";
import { registerSecret } from "../../../src/errors.js";
import { deliverCsv, csvOutput } from "../../../src/sinks/csv/deliver-csv.js";
import { deliver, deliverEach, pendingRuns } from "../../../src/sinks/ledger.js";
import { readCompleteFolder } from "../../../src/sinks/files/manifest.js";
import { tempStore, type TempStore } from "../../helpers/temp-store.js";
import { baseData, csvObjects, failedRunWithChanges, runSync } from "./fixtures.js";
import { runDir } from "../../helpers/run-folders.js";

let cleanup: (() => void)[] = [];
afterEach(() => {
  for (const c of cleanup.reverse()) c();
  cleanup = [];
});

function setup(): TempStore & { out: string } {
  const t = tempStore();
  cleanup.push(t.cleanup);
  return { ...t, out: join(t.dir, "deltas") };
}

/** Every change row the folders under `out` carry, as `resource op id run`, from the CSV files themselves. */
function deliveredRows(out: string): string[] {
  if (!existsSync(out)) return [];
  const rows: string[] = [];
  for (const folder of readdirSync(out).filter((f) => /^\d+$/.test(f))) {
    for (const file of readdirSync(join(out, folder)).filter((f) => f.endsWith(".csv") && f !== "claim_lines.csv")) {
      for (const r of csvObjects(join(out, folder, file))) rows.push(`${file.replace(".csv", "")} ${r.op} ${r.id} ${r.run_id}`);
    }
  }
  return rows.sort();
}

/** Every change the snapshot recorded, in the same form. */
function recordedRows(t: TempStore): string[] {
  return (t.db.prepare("SELECT resource, op, id, run_id FROM changes").all() as { resource: string; op: string; id: string; run_id: number }[])
    .map((c) => `${c.resource} ${c.op} ${c.id} ${c.run_id}`)
    .sort();
}

describe("the delivery ledger", () => {
  it("pendingRuns lists finished runs the output has not received, ascending, up to a run; running runs never", async () => {
    const t = setup();
    const r1 = await runSync(t, baseData());
    const data = baseData();
    data.designs[0]!.name = "Platinum";
    const r2 = await failedRunWithChanges(t, data);
    const r3 = await runSync(t, data);
    expect(pendingRuns(t.db, "memory:a", r3.runId)).toEqual([r1.runId, r2.runId, r3.runId]);
    expect(pendingRuns(t.db, "memory:a", r2.runId)).toEqual([r1.runId, r2.runId]);
    // A run still going is not finished: its changes are incomplete.
    const running = t.store.startRun("sync", { x: 1 });
    expect(pendingRuns(t.db, "memory:a", running.runId)).toEqual([r1.runId, r2.runId, r3.runId]);
    const outcome = await deliver(t.db, "memory:a", running.runId, (runs) => runs.length);
    expect(outcome).toMatchObject({ status: "delivered", runs: [r1.runId, r2.runId, r3.runId], value: 3 });
    expect(pendingRuns(t.db, "memory:a", running.runId)).toEqual([]);
    // Each output has its own ledger.
    expect(pendingRuns(t.db, "memory:b", r3.runId)).toEqual([r1.runId, r2.runId, r3.runId]);
    expect(await deliver(t.db, "memory:a", r3.runId, () => 1)).toEqual({ status: "nothing", runs: [] });
  });

  it("a failed run that is not resumed: its committed changes ride with the next successful delivery", async () => {
    const t = setup();
    const r1 = await runSync(t, baseData());
    expect((await deliverCsv(t.db, t.out, r1.runId)).status).toBe("delivered");
    const data = baseData();
    data.designs[0]!.name = "Platinum"; // applied by the failing run before it dies
    data.members[0]!.firstName = "Anna";
    // Another claims window (a retry after midnight): a new walk, not a resume.
    const r2 = await failedRunWithChanges(t, data);
    expect(t.db.prepare("SELECT COUNT(*) FROM changes WHERE run_id = ?").pluck().get(r2.runId)).toBeGreaterThan(0);
    const r3 = await runSync(t, data);
    expect(r3.resumedFrom).toBeUndefined();
    const d3 = await deliverCsv(t.db, t.out, r3.runId);
    expect(d3).toMatchObject({ status: "delivered", runs: [r2.runId, r3.runId] });
    // Each run its own folder: the failed run's changes in its own.
    const designs = csvObjects(join(t.out, runDir(r2.runId), "designs.csv"));
    expect(designs).toEqual([expect.objectContaining({ op: "update", run_id: String(r2.runId), id: "d1", name: "Platinum" })]);
    expect(deliveredRows(t.out)).toEqual(recordedRows(t));
  });

  it("a failed delivery is recorded failed (redacted), its runs stay pending, and the next delivery carries them: each change exactly once", async () => {
    const t = setup();
    registerSecret("sk_test_ledger_secret_123");
    const r1 = await runSync(t, baseData());
    const failed = await deliver(t.db, csvOutput(t.out), r1.runId, () => {
      throw new Error("disk full for 123-45-6789 with key sk_test_ledger_secret_123");
    });
    expect(failed).toMatchObject({ status: "failed", runs: [r1.runId] });
    expect(failed.deliveryId).toBeGreaterThan(0);
    const row = t.db.prepare("SELECT status, error, runs FROM deliveries WHERE delivery_id = ?").get(failed.deliveryId) as Record<string, string>;
    expect(row.status).toBe("failed");
    expect(row.error).toContain("disk full");
    expect(row.error).not.toContain("123-45-6789");
    expect(row.error).not.toContain("sk_test_ledger_secret_123");
    expect(failed.error?.message).not.toContain("123-45-6789");
    expect(pendingRuns(t.db, csvOutput(t.out), r1.runId)).toEqual([r1.runId]);

    const data = baseData();
    data.members.push({ ...baseData().members[0]!, id: "m9", firstName: "Chloé" });
    const r2 = await runSync(t, data);
    const ok = await deliverCsv(t.db, t.out, r2.runId);
    expect(ok).toMatchObject({ status: "delivered", runs: [r1.runId, r2.runId] });
    expect(readdirSync(t.out).filter((f) => !f.startsWith(".")).sort()).toEqual([runDir(r1.runId), runDir(r2.runId)]);
    expect(deliveredRows(t.out)).toEqual(recordedRows(t));
    const r3 = await runSync(t, data);
    expect(await deliverCsv(t.db, t.out, r3.runId)).toMatchObject({ status: "delivered", runs: [r3.runId] });
    expect(deliveredRows(t.out)).toEqual(recordedRows(t));
    const ledger = t.db.prepare("SELECT run_id, delivery_id FROM _delivered_runs ORDER BY run_id").all();
    // One delivery per run: each recorded on its own, the last of the catch-up being run 2's.
    expect(ledger).toEqual([
      { run_id: r1.runId, delivery_id: expect.any(Number) },
      { run_id: r2.runId, delivery_id: ok.deliveryId },
      { run_id: r3.runId, delivery_id: expect.any(Number) },
    ]);
    expect(new Set((ledger as { delivery_id: number }[]).map((l) => l.delivery_id)).size).toBe(3);
  });

  it("sync --out after a failed run delivers nothing until a run succeeds (run-sync-job rule), and a CSV failure is a failed delivery", async () => {
    const t = setup();
    const r1 = await runSync(t, baseData());
    writeFileSync(join(t.dir, "a-file"), "x");
    const bad = await deliverCsv(t.db, join(t.dir, "a-file", "deltas"), r1.runId);
    expect(bad.status).toBe("failed");
    expect(bad.error?.message).toContain(join(t.dir, "a-file"));
    expect(bad.error?.message).toMatch(/not a directory/);
    expect(bad.error?.message).toMatch(/Fix:/);
    expect(pendingRuns(t.db, csvOutput(join(t.dir, "a-file", "deltas")), r1.runId)).toEqual([r1.runId]);
  });

  it("a first delivery after a long history (more runs than SQLite takes parameters) carries them all", async () => {
    const t = setup();
    const r1 = await runSync(t, baseData());
    // 20,000 finished runs that changed nothing: two years of hourly runs. One delivery carries
    // them all to an output that takes several runs at once (a warehouse).
    t.db.exec(`WITH RECURSIVE n(i) AS (SELECT 1 UNION ALL SELECT i + 1 FROM n WHERE i < 20000)
      INSERT INTO _runs (job, status, started_at, finished_at, options) SELECT 'sync', 'succeeded', '2026-01-01T00:00:00Z', '2026-01-01T00:00:01Z', '{}' FROM n`);
    const last = t.db.prepare("SELECT MAX(run_id) FROM _runs").pluck().get() as number;
    const d = await deliver(t.db, "memory:warehouse", last, (runs) => runs.length);
    expect(d.error).toBeUndefined();
    expect(d).toMatchObject({ status: "delivered", value: 20001 });
    expect(d.runs).toHaveLength(20001);
    expect(d.runs[0]).toBe(r1.runId);
    expect(pendingRuns(t.db, "memory:warehouse", last)).toEqual([]);
  });

  it("a folder output takes each run on its own, oldest first; a failure stops there and leaves the later runs pending", async () => {
    const t = setup();
    const r1 = await runSync(t, baseData());
    const data = baseData();
    data.members[0]!.firstName = "Anna";
    const r2 = await runSync(t, data);
    const r3 = await runSync(t, baseData());
    const output = csvOutput(t.out);
    const seen: number[][] = [];
    const failing = await deliverEach(t.db, output, r3.runId, (runs) => {
      seen.push([...runs]);
      if (runs[0] === r2.runId) throw new Error("the disk filled up");
      return runs[0];
    });
    expect(seen).toEqual([[r1.runId], [r2.runId]]);
    expect(failing).toMatchObject({ status: "failed", runs: [r2.runId, r3.runId], delivered: [r1.runId], values: [r1.runId] });
    expect(pendingRuns(t.db, output, r3.runId)).toEqual([r2.runId, r3.runId]);
    const d = await deliverCsv(t.db, t.out, r3.runId);
    expect(d).toMatchObject({ status: "delivered", runs: [r2.runId, r3.runId] });
    expect(d.values?.map((f) => f.dir)).toEqual([join(t.out, runDir(r2.runId)), join(t.out, runDir(r3.runId))]);
    const rows = t.db.prepare("SELECT for_run, runs, status FROM _deliveries ORDER BY delivery_id").all();
    expect(rows).toEqual([
      { for_run: r1.runId, runs: `[${r1.runId}]`, status: "delivered" },
      { for_run: r2.runId, runs: `[${r2.runId}]`, status: "failed" },
      { for_run: r2.runId, runs: `[${r2.runId}]`, status: "delivered" },
      { for_run: r3.runId, runs: `[${r3.runId}]`, status: "delivered" },
    ]);
  });

  it("a run listed pending again right after its delivery (the ledger lost its receipt) stops the delivery, naming the run, not written twice", async () => {
    const t = setup();
    const r1 = await runSync(t, baseData());
    const r2 = await runSync(t, baseData());
    const output = csvOutput(t.out);
    // A ledger that does not keep a receipt: each run recorded received is forgotten at once, so
    // every run stays pending after its delivery (the defect of a pendingRuns without its NOT EXISTS).
    t.db.exec("CREATE TRIGGER forget_receipt AFTER INSERT ON _delivered_runs BEGIN DELETE FROM _delivered_runs WHERE output = NEW.output AND run_id = NEW.run_id; END");
    const seen: number[][] = [];
    const outcome = await deliverEach(t.db, output, r2.runId, (runs) => {
      seen.push([...runs]);
      // Before the bound, the loop wrote run 1 forever (the test stopped it after three writes).
      if (seen.length > 3) throw new Error(`written ${seen.length} times: ${JSON.stringify(seen)}`);
      return runs[0];
    });
    expect(seen).toEqual([[r1.runId]]);
    expect(outcome).toMatchObject({ status: "failed", delivered: [r1.runId], error: { code: "LEDGER" } });
    expect(outcome.error?.message).toContain(`run ${r1.runId} is listed pending for ${output} again right after it was delivered there`);
    expect(t.db.prepare("SELECT status FROM _deliveries ORDER BY delivery_id").pluck().all()).toEqual(["delivered", "failed"]);
  });

  it("the output identity is the absolute directory: a relative path and its absolute form are one output", () => {
    const here = process.cwd();
    expect(csvOutput("deltas")).toBe(`csv:${join(here, "deltas")}`);
    expect(csvOutput(join(here, "deltas") + "/")).toBe(`csv:${join(here, "deltas")}`);
  });
});

describe("a crash between the CSV folder's rename and the ledger commit", () => {
  it("the next delivery recognises the complete folder by its manifest, marks it delivered, and sends nothing twice", async () => {
    const t = setup();
    const r1 = await runSync(t, baseData());
    // The state a crash leaves: the folder renamed into place, the delivery still pending, its process gone.
    const { crashAfterWrite } = await import("./crash.js");
    await crashAfterWrite(t.path, t.out, r1.runId, "after-rename");
    expect(existsSync(join(t.out, runDir(r1.runId), "manifest.json"))).toBe(true);
    expect(t.db.prepare("SELECT status FROM _deliveries").pluck().all()).toEqual(["pending"]);
    const before = readFileSync(join(t.out, runDir(r1.runId), "members.csv"));

    const data = baseData();
    data.members[1]!.firstName = "Zoe";
    const r2 = await runSync(t, data);
    const d2 = await deliverCsv(t.db, t.out, r2.runId);
    expect(d2).toMatchObject({ status: "delivered", runs: [r2.runId] });
    expect(t.db.prepare("SELECT status, runs FROM _deliveries ORDER BY delivery_id").all()).toEqual([
      { status: "delivered", runs: JSON.stringify([r1.runId]) },
      { status: "delivered", runs: JSON.stringify([r2.runId]) },
    ]);
    expect(readFileSync(join(t.out, runDir(r1.runId), "members.csv"))).toEqual(before);
    expect(deliveredRows(t.out)).toEqual(recordedRows(t));
  });

  it("a crash between two runs' folders (the second renamed, not recorded): the first stays delivered, the second is recognised, nothing is written twice", async () => {
    const t = setup();
    const r1 = await runSync(t, baseData());
    const data = baseData();
    data.members[1]!.firstName = "Zoe";
    const r2 = await runSync(t, data);
    const { crashAfterWrite } = await import("./crash.js");
    await crashAfterWrite(t.path, t.out, r2.runId, "each-after-second-rename");
    expect(t.db.prepare("SELECT for_run, status FROM _deliveries ORDER BY delivery_id").all()).toEqual([
      { for_run: r1.runId, status: "delivered" },
      { for_run: r2.runId, status: "pending" },
    ]);
    const second = readFileSync(join(t.out, runDir(r2.runId), "members.csv"));
    const r3 = await runSync(t, data);
    const d3 = await deliverCsv(t.db, t.out, r3.runId);
    expect(d3).toMatchObject({ status: "delivered", runs: [r3.runId] });
    expect(t.db.prepare("SELECT for_run, status FROM _deliveries ORDER BY delivery_id").all()).toEqual([
      { for_run: r1.runId, status: "delivered" },
      { for_run: r2.runId, status: "delivered" },
      { for_run: r3.runId, status: "delivered" },
    ]);
    expect(readFileSync(join(t.out, runDir(r2.runId), "members.csv"))).toEqual(second);
    expect(deliveredRows(t.out)).toEqual(recordedRows(t));
  });

  it("a crash before the rename leaves no folder: that delivery is recorded failed and its run is delivered again", async () => {
    const t = setup();
    const r1 = await runSync(t, baseData());
    const { crashAfterWrite } = await import("./crash.js");
    await crashAfterWrite(t.path, t.out, r1.runId, "before-write");
    expect(existsSync(join(t.out, runDir(r1.runId)))).toBe(false);
    const r2 = await runSync(t, baseData());
    const d2 = await deliverCsv(t.db, t.out, r2.runId);
    expect(d2).toMatchObject({ status: "delivered", runs: [r1.runId, r2.runId] });
    const rows = t.db.prepare("SELECT status, error FROM _deliveries ORDER BY delivery_id").all() as { status: string; error: string | null }[];
    expect(rows.map((r) => r.status)).toEqual(["failed", "delivered", "delivered"]);
    expect(rows[0]!.error).toMatch(/interrupted/);
    expect(deliveredRows(t.out)).toEqual(recordedRows(t));
  });

  it("a folder whose files do not match its manifest is not taken for complete", async () => {
    const t = setup();
    const r1 = await runSync(t, baseData());
    const { crashAfterWrite } = await import("./crash.js");
    await crashAfterWrite(t.path, t.out, r1.runId, "after-rename");
    // A power loss can leave the rename durable and a file's data not: the hashes tell.
    writeFileSync(join(t.out, runDir(r1.runId), "members.csv"), "");
    const r2 = await runSync(t, baseData());
    const d2 = await deliverCsv(t.db, t.out, r2.runId);
    expect(d2).toMatchObject({ status: "delivered", runs: [r1.runId, r2.runId] });
    // Run 1's folder is written again whole, in place of the damaged copy.
    expect(readCompleteFolder(join(t.out, runDir(r1.runId)))).toMatchObject({ runId: r1.runId, runs: [r1.runId] });
    expect(deliveredRows(t.out)).toEqual(recordedRows(t));
  });

  it("a delivery still in progress in another live process is left alone, and its runs are not sent twice", async () => {
    const t = setup();
    const r1 = await runSync(t, baseData());
    const output = csvOutput(t.out);
    // Another live process on this host (our parent process stands in for it) holds a pending delivery of r1.
    t.db
      .prepare("INSERT INTO _deliveries (output, for_run, runs, status, started_at, detail) VALUES (?, ?, ?, 'pending', ?, ?)")
      .run(output, r1.runId, JSON.stringify([r1.runId]), new Date().toISOString(), JSON.stringify({ pid: process.ppid, host: (await import("node:os")).hostname() }));
    const r2 = await runSync(t, baseData());
    const d2 = await deliverCsv(t.db, t.out, r2.runId);
    expect(d2).toMatchObject({ status: "delivered", runs: [r2.runId] });
    expect(t.db.prepare("SELECT status FROM _deliveries ORDER BY delivery_id").pluck().all()).toEqual(["pending", "delivered"]);
  });
});

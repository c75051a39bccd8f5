/**
 * Run folders a loader picks up safely: named by the run id zero-padded to 8 digits, so that text
 * order is run order; a folder an older version named by the bare run id still counts as delivered.
 */
import { existsSync, readdirSync, readFileSync, renameSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { deliverCsv } from "../../../src/sinks/csv/deliver-csv.js";
import { exportFolder } from "../../../src/sinks/files/formats.js";
import { runDir } from "../../helpers/run-folders.js";
import { useTempStores, type TempStore } from "../../helpers/temp-store.js";
import { baseData, runSync } from "./fixtures.js";

const store = useTempStores();
const setup = (): TempStore & { out: string } => {
  const t = store();
  return { ...t, out: join(t.dir, "deltas") };
};

describe("run folder names", () => {
  it("sync's delivery names each folder by its run zero-padded to 8 digits: text order is run order past run 9; ids inside stay plain", async () => {
    const t = setup();
    const runs: number[] = [];
    for (let i = 0; i < 12; i++) {
      const data = baseData();
      data.designs[0]!.name = `Gold ${i}`;
      runs.push((await runSync(t, data)).runId);
    }
    const d = await deliverCsv(t.db, t.out, runs.at(-1)!);
    expect(d.status).toBe("delivered");
    const names = readdirSync(t.out).filter((n) => !n.startsWith("."));
    expect(names).toContain("00000010");
    expect(names).toContain("00000002");
    // Sorted as text (what `ls` and a loader's glob give), the folders come in run order.
    expect([...names].sort()).toEqual(runs.map((r) => String(r).padStart(8, "0")));
    const m = JSON.parse(readFileSync(join(t.out, "00000010", "manifest.json"), "utf8")) as { runId: unknown; runs: unknown };
    expect(m.runId).toBe(10);
    expect(m.runs).toEqual([10]);
    expect(readFileSync(join(t.out, "00000010", "designs.csv"), "utf8")).toContain("update,10,d1,");
  });

  it("export names its folder the same way", async () => {
    const t = setup();
    const r = await runSync(t, baseData());
    const f = await exportFolder(t.db, r.runId, t.out, "jsonl");
    expect(f.dir).toBe(join(t.out, `0000000${r.runId}`));
    expect(existsSync(join(t.out, `0000000${r.runId}`, "manifest.json"))).toBe(true);
  });

  it("a folder an older version wrote as DIR/<run>/ (a crash before the ledger recorded it) is recognised as delivered: nothing is written twice", async () => {
    const t = setup();
    const r1 = await runSync(t, baseData());
    const { crashAfterWrite } = await import("./crash.js");
    await crashAfterWrite(t.path, t.out, r1.runId, "after-rename");
    // What an older version left: the folder under the bare run id, its manifest without the newer keys.
    const legacy = join(t.out, String(r1.runId));
    renameSync(join(t.out, runDir(r1.runId)), legacy);
    const m = JSON.parse(readFileSync(join(legacy, "manifest.json"), "utf8")) as { runId: number; format: string; runs: number[]; files: unknown[] };
    writeFileSync(join(legacy, "manifest.json"), `${JSON.stringify({ runId: m.runId, format: m.format, runs: m.runs, files: m.files }, null, 2)}\n`);
    expect(t.db.prepare("SELECT status FROM _deliveries").pluck().all()).toEqual(["pending"]);

    const r2 = await runSync(t, baseData());
    const d2 = await deliverCsv(t.db, t.out, r2.runId);
    expect(d2).toMatchObject({ status: "delivered", runs: [r2.runId] });
    expect(t.db.prepare("SELECT status, runs FROM _deliveries ORDER BY delivery_id").all()).toEqual([
      { status: "delivered", runs: JSON.stringify([r1.runId]) },
      { status: "delivered", runs: JSON.stringify([r2.runId]) },
    ]);
    expect(readdirSync(t.out).filter((n) => !n.startsWith(".")).sort()).toEqual([runDir(r2.runId), String(r1.runId)]);
  });
});

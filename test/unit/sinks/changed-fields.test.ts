/**
 * Rows that say what changed: an update row names its changed fields with the column names, in
 * column order (the documented fields in their order, then the others sorted); insert and delete
 * rows name none. A claim's lines are numbered from 1, as the snapshot's `claim_lines` view does.
 */
import { readFileSync } from "node:fs";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { exportFolder } from "../../../src/sinks/files/formats.js";
import { useTempStores, type TempStore } from "../../helpers/temp-store.js";
import { baseData, csvObjects, runSync } from "./fixtures.js";

const setup = useTempStores();

/** Run 1: the base data. Run 2: m1 changes three documented fields and two others; m2 goes; k1 gets a second line. */
async function twoRuns(t: TempStore): Promise<number> {
  await runSync(t, baseData());
  const data = baseData();
  const m1 = data.members[0]! as Record<string, unknown>;
  Object.assign(m1, { firstName: "Anabel", lastName: "Ortiz", address: { city: "Dallas" }, zeta: "z", alpha: "a" });
  data.members = data.members.filter((m) => m.id !== "m2");
  data.claims[0]!.lines = [{ code: "99213", amount: "100.00" }, { code: "87086", amount: "25.50" }];
  return (await runSync(t, data)).runId;
}

describe("changed_fields", () => {
  it("names what the dictionary says it may besides columns: a removed undocumented field (no column left), an object as a whole; null and absent are the same", async () => {
    const t = setup();
    const d1 = baseData();
    (d1.members[0] as Record<string, unknown>).zeta = "z";
    await runSync(t, d1);
    const d2 = baseData();
    (d2.members[1] as Record<string, unknown>).email = null; // absent before: no change
    (d2.members[2] as Record<string, unknown>).address = null;
    (d2.claims[0] as Record<string, unknown>).processing = { paidDate: "2026-02-20" };
    const run = (await runSync(t, d2)).runId;
    const dir = (await exportFolder(t.db, run, join(t.dir, "csv"), "csv")).dir;
    const members = csvObjects(join(dir, "members.csv"));
    const header = readFileSync(join(dir, "members.csv"), "utf8").split("\r\n")[0]!.split(",");
    expect(members.map((m) => [m.id, m.op, m.changed_fields])).toEqual([
      ["m1", "update", '["zeta"]'],
      ["m3", "update", '["address"]'],
    ]);
    expect(header).not.toContain("zeta");
    expect(header).toContain("address.city");
    const claims = csvObjects(join(dir, "claims.csv"));
    expect(claims.map((c) => [c.id, c.changed_fields])).toEqual([["k1", '["processing"]']]);
    // docs/outputs.md says so, and where a claim line's number starts.
    const doc = readFileSync(new URL("../../../docs/outputs.md", import.meta.url), "utf8");
    const section = doc.split("\n## changed_fields\n")[1]!.split("\n## ")[0]!;
    for (const said of ["`lines`", "a field no column documents", "has no column for it at all", "an object as a whole (`address`, `processing`)", "from null to absent"]) expect(section).toContain(said);
    expect(doc).toMatch(/\| `line_no` \| `line_no` \| integer \| INT64 \| the item's place in its `lines` list, counted from 1 /);
  });

  it("CSV: an update row lists the changed columns in column order (JSON array); inserts and deletes leave it empty", async () => {
    const t = setup();
    const run = await twoRuns(t);
    const dir = (await exportFolder(t.db, run, join(t.dir, "csv"), "csv")).dir;
    const members = csvObjects(join(dir, "members.csv"));
    const header = Object.keys(members[0]!);
    expect(header.slice(0, 4)).toEqual(["op", "run_id", "id", "changed_fields"]);
    const m1 = members.find((m) => m.id === "m1")!;
    expect(m1.op).toBe("update");
    expect(JSON.parse(m1.changed_fields!)).toEqual(["firstName", "lastName", "address.city", "alpha", "zeta"]);
    // The same names as the header's, in the header's order.
    const names = JSON.parse(m1.changed_fields!) as string[];
    expect(names.map((n) => header.indexOf(n))).toEqual([...names.map((n) => header.indexOf(n))].sort((a, b) => a - b));
    expect(names.every((n) => header.includes(n))).toBe(true);
    const m2 = members.find((m) => m.id === "m2")!;
    expect(m2.op).toBe("delete");
    expect(m2.changed_fields).toBe("");
    const claims = csvObjects(join(dir, "claims.csv"));
    expect(claims.find((c) => c.id === "k1")!.changed_fields).toBe('["lines"]');
  });

  it("JSONL: the same names in the same order; null for inserts and deletes", async () => {
    const t = setup();
    const run = await twoRuns(t);
    const dir = (await exportFolder(t.db, run, join(t.dir, "jsonl"), "jsonl")).dir;
    const rows = readFileSync(join(dir, "members.jsonl"), "utf8").trimEnd().split("\n").map((l) => JSON.parse(l) as { id: string; op: string; changed_fields: unknown });
    expect(rows.find((r) => r.id === "m1")!.changed_fields).toEqual(["firstName", "lastName", "address.city", "alpha", "zeta"]);
    expect(rows.find((r) => r.id === "m2")).toMatchObject({ op: "delete", changed_fields: null });
  });

  it("CSV: a claim's lines are numbered line_no from 1, as in the snapshot's claim_lines view", async () => {
    const t = setup();
    const run = await twoRuns(t);
    const dir = (await exportFolder(t.db, run, join(t.dir, "csv"), "csv")).dir;
    const lines = csvObjects(join(dir, "claim_lines.csv"));
    expect(Object.keys(lines[0]!)).toEqual(["op", "run_id", "claim_id", "line_no", "code", "amount"]);
    expect(lines.map((l) => [l.claim_id, l.line_no, l.code])).toEqual([
      ["k1", "1", "99213"],
      ["k1", "2", "87086"],
    ]);
    const view = t.db.prepare("SELECT claim_id, line_no, code FROM claim_lines WHERE claim_id = 'k1' ORDER BY line_no").raw().all();
    expect(lines.map((l) => [l.claim_id, Number(l.line_no), l.code])).toEqual(view);
  });
});

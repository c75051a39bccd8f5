import { readdirSync, readFileSync } from "node:fs";
import { join } from "node:path";
import { afterEach, describe, expect, it } from "vitest";
import { sync } from "../../../src/pipeline/sync.js";
import { deliverCsv } from "../../../src/sinks/csv/deliver-csv.js";
import { writeRunCsv } from "../../../src/sinks/csv/write-run-csv.js";
import { SnapshotStore } from "../../../src/store/snapshot.js";
import { memorySource } from "../../helpers/memory-source.js";
import { TEST_PII_KEY, tempStore } from "../../helpers/temp-store.js";
import { baseData, WINDOW } from "./fixtures.js";

let cleanup: (() => void)[] = [];
afterEach(() => {
  for (const c of cleanup.reverse()) c();
  cleanup = [];
});

describe("PHI in CSV deltas", () => {
  it("a snapshot kept with --pii keep holds plain SSNs, and still none reaches a CSV file (export or delivery)", async () => {
    const t = tempStore();
    cleanup.push(t.cleanup);
    const store = new SnapshotStore(t.db, { piiKey: TEST_PII_KEY, piiMode: "keep" });
    const data = baseData();
    (data.members[1]!.coverages as Record<string, unknown>[])[0]!.dependentSsn = "987-65-4321";
    const r = await sync({ source: memorySource(() => data), store, claimsWindow: WINDOW });
    expect(typeof r.runId).toBe("number");
    const runId = r.runId as number;
    // The premise: the snapshot does hold them in this mode.
    expect(t.db.prepare("SELECT data FROM members WHERE id = 'm1'").pluck().get()).toContain("123-45-6701");
    const exported = writeRunCsv(t.db, runId, join(t.dir, "export"));
    const delivered = await deliverCsv(t.db, join(t.dir, "deliver"), runId);
    expect(delivered.status).toBe("delivered");
    for (const dir of [exported.dir, delivered.value!.dir]) {
      for (const f of readdirSync(dir)) {
        const text = readFileSync(join(dir, f), "utf8");
        for (const ssn of ["123-45-6701", "123-45-6702", "123-45-6703", "987-65-4321"]) {
          expect(text).not.toContain(ssn);
          expect(text).not.toContain(ssn.replace(/-/g, ""));
        }
        expect(text.split("\r\n")[0]).not.toMatch(/(^|,|\.)[a-zA-Z]*ssn(,|$)/i);
      }
    }
  });

  it("issue 38: under --pii keep, identifiers by name, typed pairs and shapes in free text (typed columns too) reach no CSV file", async () => {
    const t = tempStore();
    cleanup.push(t.cleanup);
    const store = new SnapshotStore(t.db, { piiKey: TEST_PII_KEY, piiMode: "keep" });
    const data = baseData();
    const m = data.members[0]!;
    Object.assign(m, {
      taxId: "900-11-0001",
      "SS#": "900110002",
      ssnLast4: "900-11-0003",
      governmentIds: [{ type: "SSN", value: "900110004" }],
      address: { city: "Austin", line1: "c/o 900 11 0005" },
    });
    (data.claims[0] as Record<string, unknown>).processing = { denialReason: "member 900\u201311\u20130006 unknown" };
    const r = await sync({ source: memorySource(() => data), store, claimsWindow: WINDOW });
    const runId = r.runId as number;
    // The premise: SQLite keeps them plain in this mode, typed columns too.
    expect(t.db.prepare("SELECT address_line1 FROM members WHERE id = 'm1'").pluck().get()).toBe("c/o 900 11 0005");
    const plain = ["900-11-0001", "900110002", "900-11-0003", "900110004", "900 11 0005", "900\u201311\u20130006"];
    const exported = writeRunCsv(t.db, runId, join(t.dir, "export"));
    const delivered = await deliverCsv(t.db, join(t.dir, "deliver"), runId);
    expect(delivered.status).toBe("delivered");
    let seen = "";
    for (const dir of [exported.dir, delivered.value!.dir]) {
      for (const f of readdirSync(dir)) {
        const text = readFileSync(join(dir, f), "utf8");
        seen += text;
        for (const p of plain) expect(text.includes(p) || text.includes(p.replace(/\D/g, "")), `${p} in ${f}`).toBe(false);
      }
    }
    // What is written instead: the shape as [ssn] in the typed column and in the record.
    expect(seen).toContain("c/o [ssn]");
    expect(seen).toContain("member [ssn] unknown");
  });
});

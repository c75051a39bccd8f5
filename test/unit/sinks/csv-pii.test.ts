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
});

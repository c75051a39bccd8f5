/**
 * Spreadsheet formulas in names (OWASP "CSV injection"): the reconciliation's CSV files, which
 * people open in a spreadsheet, start a cell beginning with `=`, `+`, `-`, `@`, a tab or a CR with
 * `'` (a plain number such as `-12.50` stays a number); the delta CSV files of the same runs keep
 * the names byte for byte, for loaders.
 */
import { readFileSync } from "node:fs";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { reconcile } from "../../../src/reports/reconcile.js";
import { exportFolder } from "../../../src/sinks/files/formats.js";
import { useTempStores } from "../../helpers/temp-store.js";
import { baseData, csvObjects, member, runSync } from "../../unit/sinks/fixtures.js";

const LINK = '=HYPERLINK("http://x","y")';
const CMD = "+cmd|' /C calc'!A0";

describe("reconcile's CSV files and spreadsheet formulas", () => {
  const setup = useTempStores();

  it("neutralises a leading = + - @ in the report's cells, keeps plain numbers, and the delta CSV keeps the names", async () => {
    const t = setup();
    expect((await runSync(t, baseData())).status).toBe("succeeded");
    const d = baseData();
    d.members.push({ ...member("m4", "Bo"), lastName: LINK }, { ...member("m5", "@SUM(A1)"), lastName: CMD });
    Object.assign(d.claims[0]!, { paidAmount: "-12.50" });
    const run2 = await runSync(t, d);
    expect(run2.status).toBe("succeeded");

    const out = join(t.dir, "report");
    reconcile(t.db, { from: "1", to: String(run2.runId), outDir: out });
    const changes = csvObjects(join(out, "eligibility-changes.csv"));
    const added = (id: string) => changes.find((r) => r.member_id === id);
    expect(added("m4")).toMatchObject({ last_name: `'${LINK}` });
    expect(added("m5")).toMatchObject({ last_name: `'${CMD}`, first_name: "'@SUM(A1)" });
    const audit = csvObjects(join(out, "eligibility-audit.csv")).filter((r) => r.member_id === "m4");
    for (const r of audit) expect(r.last_name).toBe(`'${LINK}`);
    const claims = csvObjects(join(out, "claims.csv"));
    expect(claims.map((r) => r.to_paid)).toContain("-12.50");
    // No cell of any of the report's CSV files starts a formula.
    for (const f of ["eligibility-changes.csv", "eligibility-audit.csv", "membership.csv", "claims.csv", "claim-transitions.csv", "findings.csv"]) {
      for (const r of csvObjects(join(out, f))) for (const v of Object.values(r)) expect(/^[=+@\t\r]|^-(?!\d+(\.\d+)?$)/.test(v), `${f}: ${v}`).toBe(false);
    }

    const delta = await exportFolder(t.db, run2.runId, join(t.dir, "delta"), "csv");
    const members = readFileSync(join(delta.dir, "members.csv"), "utf8");
    expect(members).toContain(`"=HYPERLINK(""http://x"",""y"")"`);
    expect(members).toContain(`,${CMD},`);
    expect(members).toContain(",@SUM(A1),");
    expect(members).not.toContain("'=");
    expect(members).not.toContain("'+");
  });
});

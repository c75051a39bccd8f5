/**
 * Reconcile's membership figures on a history small enough to count by hand: two runs of an
 * in-memory source in which one coverage is terminated, one reinstated, one moves plan, one is
 * added with its member and one deleted with its member. Every figure is written out here; then a
 * corrupt version that breaks one cell must fail the arithmetic.
 */
import { mkdtempSync, readFileSync, rmSync } from "node:fs";
import { join } from "node:path";
import { tmpdir } from "node:os";
import { afterEach, describe, expect, it } from "vitest";
import { classify } from "../../../src/reports/membership.js";
import { reconcile } from "../../../src/reports/reconcile.js";
import { memorySource, type MemoryData } from "../../helpers/memory-source.js";
import { syncStarted, useTempStores } from "../../helpers/temp-store.js";

const window = { from: "2026-01-01", to: "2026-03-31" };
const cov = (id: string, planId: string, status: string, endDate: string | null = null) => ({ id, groupId: "G1", groupPolicyId: "GP1", planId, status, startDate: "2026-01-01", endDate });
const member = (id: string, coverages: Record<string, unknown>[], lastName = id) => ({ id, firstName: "A", lastName, coverages });
const data = (members: Record<string, unknown>[]): MemoryData => ({
  designs: [{ id: "d1", name: "Gold", planType: "PPO" }],
  groups: [{ id: "gp1", groupId: "G1", sponsorName: "Acme", plans: [{ id: "p1", name: "Gold", basePlanDesignId: "d1" }, { id: "p2", name: "Silver", basePlanDesignId: "d1" }] }],
  members,
  claims: [],
});

describe("reconcile's membership arithmetic", () => {
  const setup = useTempStores();
  let out = "";
  afterEach(() => rmSync(out, { recursive: true, force: true }));

  /** `renamed`: also m6, whose member record changes while its coverage does not. */
  async function history(renamed = false) {
    const t = setup();
    out = mkdtempSync(join(tmpdir(), "bsync-membership-"));
    const m6 = (lastName: string) => (renamed ? [member("m6", [cov("c6", "p1", "active")], lastName)] : []);
    let d = data([
      member("m1", [cov("c1", "p1", "active")]),
      member("m2", [cov("c2", "p1", "terminated", "2026-01-31")]),
      member("m3", [cov("c3", "p1", "active")]),
      member("m4", [cov("c4", "p1", "active")]),
      ...m6("m6"),
    ]);
    const source = memorySource(() => d);
    await syncStarted({ source, store: t.store, claimsWindow: window });
    d = data([
      member("m1", [cov("c1", "p1", "terminated", "2026-02-28")]), // termination
      member("m2", [cov("c2", "p1", "active")]), // reinstatement
      member("m3", [cov("c3", "p2", "active")]), // change: moves plan
      member("m5", [cov("c5", "p2", "active")]), // addition, with its member
      ...m6("Renamed"),
    ]); // m4 and c4: deletion
    expect((await syncStarted({ source, store: t.store, claimsWindow: window })).status).toBe("succeeded");
    return t;
  }

  it("adds up, cell by cell", async () => {
    const t = await history();
    const r = reconcile(t.db, { from: "1", to: "2", outDir: join(out, "ok") });
    expect(r.members).toEqual({ from: 4, to: 4, added: 1, deleted: 1, changed: 0, holds: true });
    expect(r.coverages.movement).toEqual({ addition: 1, termination: 1, reinstatement: 1, change: 1, deletion: 1 });
    expect(r.coverages.byStatus).toEqual([
      { status: "active", from: 3, to: 3 },
      { status: "terminated", from: 1, to: 1 },
    ]);
    const cell = (planId: string, status: string, from: number, added: number, deleted: number, movedIn: number, movedOut: number, to: number) =>
      ({ groupPolicyId: "GP1", groupId: "G1", planId, status, from, added, deleted, movedIn, movedOut, to, holds: true });
    expect(r.coverages.cells).toEqual([
      cell("p1", "active", 3, 0, 1, 1, 2, 1),
      cell("p1", "terminated", 1, 0, 0, 1, 1, 1),
      cell("p2", "active", 0, 1, 0, 1, 0, 2),
    ]);
    expect(r.coverages.statusChanges).toEqual([
      { from: "active", to: "terminated", count: 1 },
      { from: "terminated", to: "active", count: 1 },
    ]);
    expect(r.arithmeticHolds).toBe(true);
  });

  it("a coverage counted at A that no move explains fails its cell and the arithmetic", async () => {
    const t = await history();
    const cols = (t.db.prepare("SELECT name FROM pragma_table_info('_coverages_v') WHERE name <> 'vid'").pluck().all() as string[]).map((c) => `"${c}"`);
    const value = (c: string) => (c === '"id"' ? "'c9'" : c === '"valid_to_run"' ? "2" : c === '"ended_by"' ? "NULL" : c === '"hash"' ? "'corrupt'" : c);
    t.db.prepare(`INSERT INTO _coverages_v (${cols.join(", ")}) SELECT ${cols.map(value).join(", ")} FROM _coverages_v WHERE id = 'c3' AND valid_from_run = 1`).run();
    const r = reconcile(t.db, { from: "1", to: "2", outDir: join(out, "broken") });
    expect(r.coverages.cells.map((c) => [c.planId, c.status, c.from, c.to, c.holds])).toEqual([
      ["p1", "active", 4, 1, false],
      ["p1", "terminated", 1, 1, true],
      ["p2", "active", 0, 2, true],
    ]);
    expect(r.members.holds).toBe(true);
    expect(r.arithmeticHolds).toBe(false);
  });

  it("classify: each movement kind from the two statuses, a missing status counting as not terminated", () => {
    const at = (status: string | null) => ({ status });
    expect(classify(undefined, at("active"))).toBe("addition");
    expect(classify(at("active"), undefined)).toBe("deletion");
    expect(classify(at("active"), at("terminated"))).toBe("termination");
    expect(classify(at(null), at("terminated"))).toBe("termination");
    expect(classify(at("terminated"), at("active"))).toBe("reinstatement");
    expect(classify(at("terminated"), at(null))).toBe("reinstatement");
    expect(classify(at("active"), at("pending"))).toBe("change");
    expect(classify(at("terminated"), at("terminated"))).toBe("change");
    expect(classify(at(null), at(null))).toBe("change");
  });

  it("writes one eligibility event per movement, with its 834 code, effective date and changed fields, and a 030 audit row per coverage at B", async () => {
    const t = await history(true);
    // The dates the runs were observed on, fixed here: a change or a deletion takes effect then.
    t.db.prepare("UPDATE _runs SET started_at = CASE run_id WHEN 1 THEN '2026-02-01T08:00:00.000Z' ELSE '2026-03-01T08:00:00.000Z' END").run();
    reconcile(t.db, { from: "1", to: "2", outDir: join(out, "ok") });
    const rows = (name: string) => readFileSync(join(out, "ok", name), "utf8").trim().split("\r\n").slice(1); // CSV lines end in CRLF (RFC 4180)
    expect(rows("eligibility-changes.csv")).toEqual([
      "024,termination,,2026-02-28,m1,,,m1,A,,c1,G1,GP1,p1,active,terminated,2026-01-01,2026-02-28,endDate status,2",
      "025,reinstatement,,2026-01-01,m2,,,m2,A,,c2,G1,GP1,p1,terminated,active,2026-01-01,,endDate status,2",
      "001,change,,2026-03-01,m3,,,m3,A,,c3,G1,GP1,p2,active,active,2026-01-01,,planId,2",
      "024,deletion,deleted at the service,2026-03-01,m4,,,m4,A,,c4,G1,GP1,p1,active,,2026-01-01,,,2",
      "021,addition,,2026-01-01,m5,,,m5,A,,c5,G1,GP1,p2,,active,2026-01-01,,,2",
      "001,change,member record,2026-03-01,m6,,,Renamed,A,,c6,G1,GP1,p1,active,active,2026-01-01,,member.lastName,2",
    ]);
    expect(rows("eligibility-audit.csv")).toEqual([
      "030,audit,,2026-01-01,m1,,,m1,A,,c1,G1,GP1,p1,,terminated,2026-01-01,2026-02-28,,",
      "030,audit,,2026-01-01,m2,,,m2,A,,c2,G1,GP1,p1,,active,2026-01-01,,,",
      "030,audit,,2026-01-01,m3,,,m3,A,,c3,G1,GP1,p2,,active,2026-01-01,,,",
      "030,audit,,2026-01-01,m5,,,m5,A,,c5,G1,GP1,p2,,active,2026-01-01,,,",
      "030,audit,,2026-01-01,m6,,,Renamed,A,,c6,G1,GP1,p1,,active,2026-01-01,,,",
    ]);
  });
});

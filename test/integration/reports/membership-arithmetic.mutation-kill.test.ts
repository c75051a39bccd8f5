/**
 * Reconcile's membership figures on a history small enough to count by hand: two runs of an
 * in-memory source in which one coverage is terminated, one reinstated, one moves plan, one is
 * added with its member and one deleted with its member. Every figure is written out here; then a
 * corrupt version that breaks one cell must fail the arithmetic.
 */
import type { Database } from "better-sqlite3";
import { mkdtempSync, readFileSync, rmSync } from "node:fs";
import { join } from "node:path";
import { tmpdir } from "node:os";
import { afterEach, describe, expect, it } from "vitest";
import { classify } from "../../../src/reports/membership.js";
import { reconcile } from "../../../src/reports/reconcile.js";
import { copyVersionRow } from "../../helpers/hand-run.js";
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

/** A copy of `id`'s version at run 1 under `newId`, current at A only, that no recorded change explains. */
function corruptCopy(db: Database, resource: "coverages" | "members", id: string, newId: string): void {
  const vid = db.prepare(`SELECT vid FROM _${resource}_v WHERE id = ? AND valid_from_run = 1`).pluck().get(id) as number;
  copyVersionRow(db, resource, vid, { id: `'${newId}'`, valid_to_run: "2", ended_by: "NULL", hash: "'corrupt'" });
}

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
    corruptCopy(t.db, "coverages", "c3", "c9");
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
    const r = reconcile(t.db, { from: "1", to: "2", outDir: join(out, "ok") });
    expect(r.eligibility).toEqual({ changes: 6, audit: 5 });
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

  it("a member counted at A that no move explains fails the members' arithmetic", async () => {
    const t = await history();
    corruptCopy(t.db, "members", "m1", "m9");
    const r = reconcile(t.db, { from: "1", to: "2", outDir: join(out, "broken") });
    expect(r.members).toEqual({ from: 5, to: 4, added: 1, deleted: 1, changed: 0, holds: false });
    expect(r.arithmeticHolds).toBe(false);
  });

  it("three runs, two groups: cells ordered by group then plan then status, a status seen only between A and B left out, a coverage missing its status counted as (none), each cell with one kind of move kept", async () => {
    const t = setup();
    out = mkdtempSync(join(tmpdir(), "bsync-membership-"));
    // The groups' policy ids sort the other way round from their group numbers.
    const c = (id: string, groupId: "G1" | "G2", planId: string, status: string | null, endDate: string | null = null) =>
      ({ id, groupId, groupPolicyId: groupId === "G1" ? "GP9" : "GP1", planId, status, startDate: "2026-01-01", endDate });
    const groups = [
      { id: "GP9", groupId: "G1", sponsorName: "Acme", plans: [] },
      { id: "GP1", groupId: "G2", sponsorName: "Zeta", plans: [] },
    ];
    const atA = [
      member("m0", [c("c9", "G2", "p3", "active")], "Zero"),
      member("m1", [c("c1", "G2", "p1", "terminated", "2026-01-31")]),
      member("m2", [c("c2", "G1", "p0", "pending", "2026-04-30")]),
      member("m4", [c("c4", "G1", "p2", null, "2026-05-01")]),
      member("m6", [c("c6", "G1", "p4", "active")]),
    ];
    let d: MemoryData = { designs: [], groups, members: atA, claims: [] };
    const source = memorySource(() => d);
    const run = async () => expect((await syncStarted({ source, store: t.store, claimsWindow: window })).status).toBe("succeeded");
    await run();
    const m6 = (lastName: string) => member("m6", [c("c6", "G1", "p4", "pending")], lastName); // its coverage changes at run 2, the member at 3
    // m5 and c5 in run 2 only.
    d = { ...d, members: [...atA.filter((m) => m.id !== "m6"), m6("m6"), member("m5", [c("c5", "G1", "p2", "suspended")])] };
    await run();
    d = {
      ...d,
      members: [
        member("m0", [c("c9", "G2", "p3", "active")], "Renamed"), // the member record changes, its coverage does not
        member("m1", [c("c1", "G2", "p1", "active")]), // reinstatement: moves out of (p1, terminated) into (p1, active)
        member("m3", [c("c3", "G1", "p2", "active")]), // addition; m2 and c2 (p0, pending) deleted
        member("m4", [c("c4", "G1", "p2", null, "2026-06-30")]), // change within its cell
        m6("Six"), // change: moves from (p4, active) to (p4, pending); one event, though the member changed too
      ],
    };
    await run();
    t.db.prepare("UPDATE _runs SET started_at = '2026-0' || run_id || '-10T08:00:00.000Z'").run();
    const r = reconcile(t.db, { from: "1", to: "3", outDir: join(out, "ok") });
    const cell = (groupId: string, planId: string, status: string, from: number, added: number, deleted: number, movedIn: number, movedOut: number, to: number) =>
      ({ groupPolicyId: groupId === "G1" ? "GP9" : "GP1", groupId, planId, status, from, added, deleted, movedIn, movedOut, to, holds: true });
    expect(r.coverages.cells).toEqual([
      cell("G1", "p0", "pending", 1, 0, 1, 0, 0, 0),
      cell("G1", "p2", "(none)", 1, 0, 0, 0, 0, 1),
      cell("G1", "p2", "active", 0, 1, 0, 0, 0, 1),
      cell("G1", "p4", "active", 1, 0, 0, 0, 1, 0),
      cell("G1", "p4", "pending", 0, 0, 0, 1, 0, 1),
      cell("G2", "p1", "active", 0, 0, 0, 1, 0, 1),
      cell("G2", "p1", "terminated", 1, 0, 0, 0, 1, 0),
      cell("G2", "p3", "active", 1, 0, 0, 0, 0, 1),
    ]);
    expect(r.coverages.byStatus).toEqual([
      { status: "(none)", from: 1, to: 1 },
      { status: "active", from: 2, to: 3 },
      { status: "pending", from: 1, to: 1 },
      { status: "terminated", from: 1, to: 0 },
    ]);
    expect(r.coverages.statusChanges).toEqual([
      { from: "active", to: "pending", count: 1 },
      { from: "terminated", to: "active", count: 1 },
    ]);
    expect(r.coverages.movement).toEqual({ addition: 1, termination: 0, reinstatement: 1, change: 3, deletion: 1 });
    expect(r.members).toEqual({ from: 5, to: 5, added: 1, deleted: 1, changed: 2, holds: true });
    // Events by member, then coverage: m0's member-record change first, though it is found last.
    // Effective: a change on the date of the run that saw it (c6's at run 2), a deletion on its end date.
    const events = readFileSync(join(out, "ok", "eligibility-changes.csv"), "utf8").trim().split("\r\n").slice(1);
    expect(events.map((e) => [0, 1, 2, 3, 4, 10, 18].map((i) => e.split(",")[i]).join("|"))).toEqual([
      "001|change|member record|2026-03-10|m0|c9|member.lastName",
      "025|reinstatement||2026-01-01|m1|c1|endDate status",
      "024|deletion|deleted at the service|2026-04-30|m2|c2|",
      "021|addition||2026-01-01|m3|c3|",
      "001|change||2026-03-10|m4|c4|endDate",
      "001|change||2026-02-10|m6|c6|status member.lastName",
    ]);
  });
});

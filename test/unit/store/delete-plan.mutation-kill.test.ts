/**
 * The delete plan asked directly (`planDeletes`, `claimsToVerify`) on a run state written here:
 * which records a member or claim walk proves gone, how each emptied scope counts them, which
 * children wait for a confirmation that read whole, and when the count of ids seen may stand in
 * for the scan of the missing ones. Every expected id, count and message is worked out by hand
 * from the facts each test writes.
 */
import type { Database } from "better-sqlite3";
import { describe, expect, it } from "vitest";
import { claimsToVerify, planDeletes, type DeletePlan } from "../../../src/store/walk/delete-plan.js";
import { defaultDeletePolicy, type DeletePolicy } from "../../../src/store/runs/run-state.js";
import { scopeOf, type Scope } from "../../../src/store/walk/scopes.js";
import { SeenIds } from "../../../src/store/walk/seen-ids.js";
import { handCheckpoints, handRun, noteChildGone, storeVersion } from "../../helpers/hand-run.js";
import { useTempStores } from "../../helpers/temp-store.js";

const policy = (p: Partial<DeletePolicy> = {}): DeletePolicy => ({ ...defaultDeletePolicy, maxDeleteCount: 100, emptyScopeMin: 100, ...p });
const planOf = (plans: DeletePlan[], resource: string) => plans.find((p) => p.resource === resource);
const window = { from: "2026-01-01", to: "2026-03-31" };
const claimsOf = (groupId: string) => scopeOf("claims", { groupId, ...window });
const claimsKey = (groupId: string) => `claims?from=2026-01-01&groupId=${groupId}&to=2026-03-31`;

/** Every SQL statement prepared on `db` from now on. */
function statements(db: Database): string[] {
  const log: string[] = [];
  const prepare = db.prepare.bind(db);
  db.prepare = ((sql: string) => {
    log.push(sql);
    return prepare(sql);
  }) as Database["prepare"];
  return log;
}

describe("the delete plan on a run state written by the test", () => {
  const setup = useTempStores();

  function designs(ids: string[], seenPages: string[][]) {
    const { db } = setup();
    for (const id of ids) storeVersion(db, "designs", id, null, {});
    const seen = new SeenIds(db);
    for (const page of seenPages) seen.markPage("designs", JSON.stringify(page));
    return { db, seen };
  }
  const allDesigns = scopeOf("designs");

  it("a record listed twice hides no gone one: the count of ids listed stands for the walk only when the distinct count reaches the current one", () => {
    // 3 ids listed (d1 twice), 3 current: yet d3 was never seen.
    const { db, seen } = designs(["d1", "d2", "d3"], [["d1", "d2"], ["d1"]]);
    const plans = planDeletes(db, handRun([allDesigns]), policy(), seen, handCheckpoints([allDesigns]));
    // The scope: 3 ids listed plus 1 proven gone (the exact count is asked only past maxDeleteCount).
    expect(plans).toEqual([{ resource: "designs", ids: ["d3"], vids: [], scopeSize: 4, blocked: undefined }]);
  });

  it("past maxDeleteCount the share is of the distinct ids seen: a page walked twice does not dilute it", () => {
    // d1 and d2 listed twice (a walk resumed from its start), d3..d5 gone: 3 of 5, not 3 of 7.
    const { db, seen } = designs(["d1", "d2", "d3", "d4", "d5"], [["d1", "d2"], ["d1", "d2"]]);
    const plans = planDeletes(db, handRun([allDesigns]), policy({ maxDeleteCount: 2, maxDeleteShare: 0.5 }), seen, handCheckpoints([allDesigns]));
    expect(plans).toEqual([{ resource: "designs", ids: ["d3", "d4", "d5"], vids: [], scopeSize: 5, blocked: "3 of 5 (60.0%), over the guard of 50% and 2 records" }]);
  });

  it("the scans are skipped when they cannot change the answer: every current id seen, or no more deletes than maxDeleteCount", () => {
    const all = designs(["d1", "d2"], [["d1", "d2"]]);
    const sql = statements(all.db);
    expect(planDeletes(all.db, handRun([allDesigns]), policy(), all.seen, handCheckpoints([allDesigns]))).toEqual([
      { resource: "designs", ids: [], vids: [], scopeSize: 2, blocked: undefined },
    ]);
    expect(sql.filter((s) => s.includes("NOT IN"))).toEqual([]);
    // One gone, maxDeleteCount 1: the scan finds it, and the guard cannot refuse, so no exact count.
    const one = designs(["d1", "d2"], [["d1"]]);
    const sql2 = statements(one.db);
    expect(planDeletes(one.db, handRun([allDesigns]), policy({ maxDeleteCount: 1 }), one.seen, handCheckpoints([allDesigns]))[0]!.ids).toEqual(["d2"]);
    expect(sql2.filter((s) => s.includes("COUNT(DISTINCT"))).toEqual([]);
  });

  it("no complete scope, or nothing stored before the walk: no plan for the resource", () => {
    const { db, seen } = designs(["d1"], []);
    expect(planDeletes(db, handRun([allDesigns]), policy(), seen, handCheckpoints([]))).toEqual([]);
    expect(planDeletes(db, handRun([allDesigns], { fresh: ["designs"] }), policy(), seen, handCheckpoints([allDesigns]))).toEqual([]);
  });

  /** Members m1..m6 (m4 with no coverage, m6's coverage with no group), seen: none. */
  function members() {
    const { db } = setup();
    const coverages: Record<string, (string | null)[]> = { m1: ["G1"], m2: ["G1"], m3: ["G2"], m4: [], m5: ["G3"], m6: [null] };
    for (const [m, groups] of Object.entries(coverages)) {
      storeVersion(db, "members", m, null, {});
      groups.forEach((g, i) => storeVersion(db, "coverages", `${m}c${i}`, m, g === null ? {} : { groupId: g }));
    }
    return { db, seen: new SeenIds(db) };
  }

  it("members: an emptied group counts the gone members of that group and those with no group, nothing else", () => {
    const { db, seen } = members();
    const [g1, g2, g3, g4] = ["G1", "G2", "G3", "G4"].map((groupId) => scopeOf("members", { groupId }));
    // G1 and G2 listed nobody, G3 listed 5 members, G4 has no tally (counted as empty, holds nobody gone).
    const tallies = { [g1!.key]: { records: 0, children: 0 }, [g2!.key]: { records: 0, children: 0 }, [g3!.key]: { records: 5, children: 0 } };
    const plans = planDeletes(db, handRun([g1!, g2!, g3!, g4!]), policy({ emptyScopeMin: 3 }), seen, handCheckpoints([g1!, g2!, g3!, g4!], tallies));
    // G1: m1, m2, and m4 and m6 (no group) = 4; G2: m3, m4, m6 = 3; both at least 3.
    expect(planOf(plans, "members")).toEqual({
      resource: "members",
      ids: ["m1", "m2", "m3", "m4", "m5", "m6"],
      vids: [],
      scopeSize: 6,
      blocked:
        "members?groupId=G1 listed no record where 4 were stored (a scope emptied: at least 3); " +
        "members?groupId=G2 listed no record where 3 were stored (a scope emptied: at least 3)",
    });
  });

  it("members: a lookup by id, even complete, does not stand for its group's walk; a member with no group waits for every group", () => {
    const { db, seen } = members();
    const [g1, g2, g3] = ["G1", "G2", "G3"].map((groupId) => scopeOf("members", { groupId }));
    const lookup = scopeOf("members", { groupId: "G2", id: "m3" });
    const plans = planDeletes(db, handRun([g1!, g2!, g3!, lookup]), policy(), seen, handCheckpoints([g1!, g3!, lookup]));
    expect(planOf(plans, "members")?.ids).toEqual(["m1", "m2", "m5"]);
  });

  it("members: with an item quarantined, ids seen may not be stored, so their count never stands for the walk", () => {
    const { db } = setup();
    storeVersion(db, "members", "m1", null, {});
    storeVersion(db, "coverages", "m1c", "m1", { groupId: "G1" });
    storeVersion(db, "members", "m2", null, {});
    storeVersion(db, "coverages", "m2c", "m2", { groupId: "G2" });
    const seen = new SeenIds(db);
    // 2 seen, 2 current, but mX was never stored: m1 is gone.
    seen.firstSightings("members", '["m2", "mX"]');
    const [g1, g2] = ["G1", "G2"].map((groupId) => scopeOf("members", { groupId }));
    const plans = planDeletes(db, handRun([g1!, g2!], { quarantined: { [g2!.key]: 1 } }), policy(), seen, handCheckpoints([g1!]));
    expect(planOf(plans, "members")?.ids).toEqual(["m1"]);
  });

  /** Claims k1..k7 in groups G1..G3 for members M1..M3 (k4 a suspect, k6 seen). */
  function claims() {
    const { db } = setup();
    const rows: [string, string, string | null, string][] = [
      ["k1", "G1", "M1", "2026-02-01"],
      ["k2", "G1", "M1", "2026-02-15"],
      ["k3", "G2", "M2", "2026-02-01"],
      ["k4", "G1", "M2", "2025-06-01"],
      ["k5", "G3", null, "2026-02-01"],
      ["k6", "G1", "M1", "2026-02-01"],
      ["k7", "G1", "M3", "2025-06-01"],
    ];
    for (const [id, group, memberId, serviceDateFrom] of rows) storeVersion(db, "claims", id, group, { memberId, serviceDateFrom });
    db.prepare("INSERT INTO _suspects (resource, id, run_id) VALUES ('claims', 'k4', 1)").run();
    const seen = new SeenIds(db);
    seen.markPage("claims", '["k6"]');
    return { db, seen };
  }

  it("claims to verify: those a complete window of their group missed, those of a group no longer listed, and suspects, by member", () => {
    const { db, seen } = claims();
    const [w1, w2] = [claimsOf("G1"), claimsOf("G2")];
    const g3members = scopeOf("members", { groupId: "G3" });
    const run = handRun([w1, w2, g3members]);
    // k3: G2's window is incomplete; k7: outside the window and not a suspect; k6: seen.
    expect(claimsToVerify(db, run, handCheckpoints([w1]), seen)).toEqual([
      { memberId: "M1", ids: ["k1", "k2"] },
      { memberId: "M2", ids: ["k4"] },
      { memberId: null, ids: ["k5"] },
    ]);
    // Nothing complete (the suspect waits too), or nothing stored before the walk: nothing to verify.
    expect(claimsToVerify(db, run, handCheckpoints([]), seen)).toEqual([]);
    expect(claimsToVerify(db, handRun([w1, w2], { fresh: ["claims"] }), handCheckpoints([w1]), seen)).toEqual([]);
  });

  it("claims to verify: every current claim seen, nothing quarantined: none, and no scan; with a quarantined window the scan is made", () => {
    const { db } = setup();
    storeVersion(db, "claims", "k1", "G1", { memberId: "M1", serviceDateFrom: "2026-02-01" });
    storeVersion(db, "claims", "k2", "G2", { memberId: "M2", serviceDateFrom: "2026-02-01" });
    const seen = new SeenIds(db);
    seen.markPage("claims", '["k2", "kX"]');
    const [w1, w2] = [claimsOf("G1"), claimsOf("G2")];
    // Two distinct seen, two current: were every id seen current, none would be missing.
    const sql = statements(db);
    expect(claimsToVerify(db, handRun([w1, w2]), handCheckpoints([w1, w2]), seen)).toEqual([]);
    expect(sql.filter((s) => s.includes("NOT IN"))).toEqual([]);
    // G2's walk quarantined an item (kX, never stored): k1 is missing after all.
    expect(claimsToVerify(db, handRun([w1, w2], { quarantined: { [w2.key]: 1 } }), handCheckpoints([w1]), seen)).toEqual([{ memberId: "M1", ids: ["k1"] }]);
  });

  it("claims: an emptied window counts the gone claims of its own group inside its dates, nothing else", () => {
    const { db, seen } = claims();
    const [w1, w2] = [claimsOf("G1"), claimsOf("G2")];
    const byMember = ["M1", "M2", "M3"].map((memberId) => scopeOf("claims", { memberId }));
    const scopes = [w1, w2, ...byMember];
    const tallies = { [w1.key]: { records: 0, children: 0 }, [w2.key]: { records: 0, children: 0 } };
    const plans = planDeletes(db, handRun(scopes), policy({ emptyScopeMin: 2 }), seen, handCheckpoints(scopes, tallies));
    // Proven: k1, k2, k3 (missed by their window), k4 (a suspect); k5 has no member, k7 is outside.
    // G1's window: k1, k2 (k4 is outside its dates) = 2; G2's: k3 = 1.
    expect(planOf(plans, "claims")).toEqual({
      resource: "claims",
      ids: ["k1", "k2", "k3", "k4"],
      vids: [],
      scopeSize: 5,
      blocked: `${claimsKey("G1")} listed no record where 2 were stored (a scope emptied: at least 2)`,
    });
  });

  it("children wait while a confirmation read of their listing quarantined an item; another scope's quarantine does not hold them", () => {
    const { db } = setup();
    storeVersion(db, "groups", "g1", null, {});
    const p1 = storeVersion(db, "plans", "p1", "g1", {});
    noteChildGone(db, "plans", p1);
    storeVersion(db, "members", "m1", null, {});
    const [c8, c9, c10] = [{ groupId: "G1" }, { groupId: "G2" }, {}].map((data, i) => storeVersion(db, "coverages", `c${8 + i}`, "m1", data));
    for (const vid of [c8!, c9!, c10!]) noteChildGone(db, "coverages", vid);
    const groups = scopeOf("groups");
    const [g1, g2] = ["G1", "G2"].map((groupId) => scopeOf("members", { groupId }));
    const confirmGroups = scopeOf("groups", { confirm: "1" });
    const [confirmG1, confirmG2] = ["G1", "G2"].map((groupId) => scopeOf("members", { groupId, confirm: "1" }));
    const scopes = [groups, g1!, g2!, confirmGroups, confirmG1!, confirmG2!];
    const vids = (quarantined: Record<string, number>) => {
      const plans = planDeletes(db, handRun(scopes, { quarantined }), policy(), new SeenIds(db), handCheckpoints([]));
      // Children are closed by version, never deleted by id.
      expect([planOf(plans, "plans")?.ids, planOf(plans, "coverages")?.ids]).toEqual([[], []]);
      return { plans: planOf(plans, "plans")?.vids, coverages: planOf(plans, "coverages")?.vids };
    };
    // The groups' confirmation and G1's quarantined: p1 and c8 wait; c9 (G2) and c10 (no group) go.
    expect(vids({ [confirmGroups.key]: 1, [confirmG1!.key]: 2 })).toEqual({ plans: [], coverages: [c9, c10] });
    // G2's confirmation only: c9 waits, the plan goes.
    expect(vids({ [confirmG2!.key]: 1 })).toEqual({ plans: [p1], coverages: [c8, c10] });
    // The walks themselves quarantined, not a confirmation: nothing waits.
    expect(vids({ [groups.key]: 1, [g1!.key]: 1 })).toEqual({ plans: [p1], coverages: [c8, c9, c10] });
  });
});

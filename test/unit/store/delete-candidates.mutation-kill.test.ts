/**
 * What a finished walk would delete before the sync confirms it (`deleteCandidates`), asked
 * directly on a snapshot whose versions, seen ids and run state are written here: members no
 * complete group walk listed, and the children their parents no longer list. A scope that reads
 * again (a lookup by id, a confirmation) never stands for a complete walk of its group.
 */
import { describe, expect, it } from "vitest";
import { deleteCandidates } from "../../../src/store/walk/delete-plan.js";
import { scopeOf, type Scope } from "../../../src/store/walk/scopes.js";
import { SeenIds } from "../../../src/store/walk/seen-ids.js";
import { handCheckpoints, handRun, noteChildGone, storeVersion } from "../../helpers/hand-run.js";
import { useTempStores } from "../../helpers/temp-store.js";

describe("delete candidates", () => {
  const setup = useTempStores();

  function snapshot() {
    const { db } = setup();
    for (const m of ["m1", "m2", "m3", "m4"]) storeVersion(db, "members", m, null, {});
    storeVersion(db, "coverages", "c1", "m1", { groupId: "G1" });
    storeVersion(db, "coverages", "c2", "m2", { groupId: "G2" });
    noteChildGone(db, "coverages", storeVersion(db, "coverages", "c8", "m4", { groupId: "G1" }));
    noteChildGone(db, "coverages", storeVersion(db, "coverages", "c9", "m4", {})); // no group
    noteChildGone(db, "coverages", storeVersion(db, "coverages", "c7", "m4", { groupId: "G1" }, true)); // an old version: not pending
    noteChildGone(db, "plans", storeVersion(db, "plans", "p1", "g1", {}));
    const seen = new SeenIds(db);
    seen.firstSightings("members", '["m4"]');
    return { db, seen };
  }
  const run = (scopes: Scope[], fresh: string[] = []) => handRun(scopes, { fresh });
  const checkpoints = (complete: Scope[]) => handCheckpoints(complete);

  it("members: one whose every group was walked completely; not one in a group walked in part, nor one with no coverage while a group is unfinished", () => {
    const { db, seen } = snapshot();
    const g1 = scopeOf("members", { groupId: "G1" });
    const g2 = scopeOf("members", { groupId: "G2" });
    expect(deleteCandidates(db, run([g1, g2]), seen, checkpoints([g1]))).toEqual({
      members: ["m1"],
      coverages: [{ id: "c8", groupId: "G1" }, { id: "c9", groupId: null }],
      plans: ["p1"],
    });
    // Both groups complete: m2 too, and m3 (no coverage) once every member scope is complete.
    expect(deleteCandidates(db, run([g1, g2]), seen, checkpoints([g1, g2])).members).toEqual(["m1", "m2", "m3"]);
    // Nothing stored before the chain began, or no group complete: no member is proven gone.
    expect(deleteCandidates(db, run([g1, g2], ["members"]), seen, checkpoints([g1, g2])).members).toEqual([]);
    expect(deleteCandidates(db, run([g1, g2]), seen, checkpoints([])).members).toEqual([]);
    // A complete walk of another resource says nothing of members.
    const designs = scopeOf("designs");
    expect(deleteCandidates(db, run([designs, g1, g2]), seen, checkpoints([designs])).members).toEqual([]);
  });

  it("a lookup by id or a confirmation read of a group, even complete, does not stand for that group's walk", () => {
    const { db, seen } = snapshot();
    const g1 = scopeOf("members", { groupId: "G1" });
    const g2 = scopeOf("members", { groupId: "G2" });
    for (const again of [scopeOf("members", { groupId: "G2", id: "m2" }), scopeOf("members", { groupId: "G2", confirm: "c2" })]) {
      expect(deleteCandidates(db, run([g1, g2, again]), seen, checkpoints([g1, again])).members, again.key).toEqual(["m1"]);
    }
  });
});

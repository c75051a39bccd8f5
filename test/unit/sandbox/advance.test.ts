import { describe, expect, it } from "vitest";
import { advanceDay } from "../../../src/sandbox/advance.js";
import { canonicalJson, splitGroup, splitMember, type ChangeSet, type Resource } from "../../../src/sandbox/changes.js";
import { claimStream, groupStream, memberStream } from "../../../src/sandbox/listing.js";
import { plantInconsistencies } from "../../../src/sandbox/inconsistencies.js";
import { SandboxState } from "../../../src/sandbox/state.js";
import { buildWorld } from "../../../src/sandbox/world.js";

type Snapshot = Record<Resource, Map<string, string>>;

/** The sync engine's view of a full walk: each resource's records by id, as canonical JSON. */
function snapshot(state: SandboxState): Snapshot {
  const s: Snapshot = { designs: new Map(), groups: new Map(), plans: new Map(), members: new Map(), coverages: new Map(), claims: new Map() };
  for (const d of state.designs) s.designs.set(d.id, canonicalJson(d));
  for (const g of groupStream(state)) {
    const { group, plans } = splitGroup(g);
    s.groups.set(g.id, canonicalJson(group));
    for (const p of plans) s.plans.set(p.id, canonicalJson(p));
  }
  for (const m of memberStream(state, {})) {
    const { member, coverages } = splitMember(m);
    s.members.set(m.id, canonicalJson(member));
    for (const c of coverages) s.coverages.set(c.id, canonicalJson(c));
  }
  for (const c of claimStream(state, {})) s.claims.set(c.id, canonicalJson(c));
  return s;
}

function diff(a: Snapshot, b: Snapshot): ChangeSet["changes"] {
  const out = {} as ChangeSet["changes"];
  for (const r of Object.keys(a) as Resource[]) {
    const before = a[r];
    const after = b[r];
    out[r] = {
      inserted: [...after.keys()].filter((k) => !before.has(k)).sort(),
      updated: [...after.keys()].filter((k) => before.has(k) && before.get(k) !== after.get(k)).sort(),
      deleted: [...before.keys()].filter((k) => !after.has(k)).sort(),
    };
  }
  return out;
}

const opts = { seed: 5, members: 3000, groups: 8, claimsPerMember: 3, today: "2026-01-15" };

describe("advanceDay", () => {
  it("returns exactly the difference of full walks before and after, day after day", () => {
    const state = new SandboxState(buildWorld(opts));
    let before = snapshot(state);
    for (let day = 0; day < 3; day++) {
      const { changeSet } = advanceDay(state);
      const after = snapshot(state);
      expect(changeSet.changes).toEqual(diff(before, after));
      before = after;
    }
    expect(state.todayIso).toBe("2026-01-18");
  });

  it("applies every kind of change a realistic day has", () => {
    const state = new SandboxState(buildWorld(opts));
    const { changeSet: cs } = advanceDay(state);
    expect(cs.day).toBe("2026-01-16");
    const c = cs.changes;
    expect(c.members.inserted.length).toBeGreaterThan(0); // new hires
    expect(c.coverages.inserted.length).toBeGreaterThan(0);
    expect(c.coverages.updated.length).toBeGreaterThan(0); // terminations, reinstatement, plan change
    expect(c.members.updated.length).toBeGreaterThan(0); // demographic changes
    expect(c.members.deleted.length).toBeGreaterThan(0); // hard deletions
    expect(c.coverages.deleted.length).toBeGreaterThanOrEqual(c.members.deleted.length);
    expect(c.claims.inserted.length).toBeGreaterThan(0);
    expect(c.claims.updated.length).toBeGreaterThan(0); // adjudications
    expect(c.designs).toEqual({ inserted: [], updated: [], deleted: [] });
    const adjudicated = c.claims.updated.map((id) => state.getClaim(id));
    expect(adjudicated.every((x) => x && (x.claimStatus === "paid" || x.claimStatus === "denied"))).toBe(true);
    const terminated = c.coverages.updated.flatMap((id) => [...memberStream(state, {})].flatMap((m) => m.coverages).filter((x) => x.id === id));
    expect(terminated.some((x) => x.status === "terminated" && x.endDate === cs.day)).toBe(true);
  });

  it("never inserts a claim for a service that has not happened: a coverage starting after the day gets none", () => {
    // demo --members 200 (seed 1, today 2026-01-15) once got a claim dated 2026-01-31 on day 2026-01-16, from a
    // coverage starting then: no claims window ending on the day could list it, and the demo said the changes differed.
    for (const o of [opts, { seed: 1, members: 200, groups: 2, claimsPerMember: 3, today: "2026-01-15" }]) {
      const state = new SandboxState(buildWorld(o));
      plantInconsistencies(state); // as the demo's sandbox does: some of its coverages start after today
      for (let day = 0; day < 5; day++) {
        const { changeSet } = advanceDay(state);
        const inserted = new Set(changeSet.changes.claims.inserted);
        const future = [...claimStream(state, {})].filter((c) => inserted.has(c.id) && c.serviceDateFrom > changeSet.day);
        expect(future.map((c) => `${c.id} ${c.serviceDateFrom} on ${changeSet.day}`)).toEqual([]);
      }
    }
  });

  it("is deterministic for a seed", () => {
    const a = new SandboxState(buildWorld(opts));
    const b = new SandboxState(buildWorld(opts));
    expect(advanceDay(a).changeSet).toEqual(advanceDay(b).changeSet);
  });
});

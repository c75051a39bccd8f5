/**
 * The delete guard at its edges, for each resource it guards: a run that deletes exactly
 * `maxDeleteCount` records, or exactly `maxDeleteShare` of the resource's scope, goes through; one
 * more is refused and changes nothing. The scope size the share is taken of is counted here by
 * hand (12 records of each resource), and the refusal must name it: a walk that lists some
 * records twice (claims looked up again by member) must not make the scope look larger.
 */
import { describe, expect, it } from "vitest";
import type { WalkedResource } from "../../../src/store/schema/resources.js";
import type { DeletePolicy } from "../../../src/store/runs/run-state.js";
import { recordedChanges } from "../../helpers/expected.js";
import { memorySource, type MemoryData } from "../../helpers/memory-source.js";
import { syncStarted, useTempStores } from "../../helpers/temp-store.js";

const window = { from: "2026-01-01", to: "2026-03-31" };
const setup = useTempStores();
const cov = (id: string, group = "G1") => ({ id, groupId: group, status: "active", startDate: "2026-01-01", endDate: null });
const ids = (prefix: string) => Array.from({ length: 12 }, (_, i) => `${prefix}${String(i).padStart(2, "0")}`);

/** Twelve records of one resource, and the same data with `k` of them gone. */
interface Case {
  readonly resource: "designs" | "groups" | "members" | "claims" | "plans" | "coverages";
  readonly walk: WalkedResource[];
  data(k: number): MemoryData;
}
const base = (): MemoryData => ({
  designs: [{ id: "d1", name: "Gold" }],
  groups: [{ id: "gp1", groupId: "G1", plans: [{ id: "p1", name: "A" }] }],
  members: [{ id: "m1", firstName: "Ana", lastName: "Lee", ssn: "123-45-6789", coverages: [cov("c-m1")] }],
  claims: [],
});
const cases: Case[] = [
  { resource: "designs", walk: ["designs"], data: (k) => ({ ...base(), designs: ids("d").slice(k).map((id) => ({ id, name: "Gold" })) }) },
  {
    resource: "groups",
    walk: ["groups"],
    data: (k) => ({ ...base(), groups: ids("G").slice(k).map((g) => ({ id: `gp-${g}`, groupId: g, plans: [{ id: `p-${g}`, name: "A" }] })) }),
  },
  {
    resource: "members",
    walk: ["groups", "members"],
    data: (k) => ({ ...base(), members: ids("m").slice(k).map((id) => ({ id, firstName: "Ana", lastName: "Lee", coverages: [cov(`c-${id}`)] })) }),
  },
  {
    // Two members with six claims each; the claims gone are taken from both, so that looking
    // them up by member lists the claims of each that are still there a second time.
    resource: "claims",
    walk: ["groups", "members", "claims"],
    data: (k) => {
      const all = ids("k").map((id, i) => ({ id, groupId: "G1", memberId: i % 2 === 0 ? "m1" : "m2", serviceDateFrom: "2026-02-01", claimStatus: "paid", paidAmount: "10.00" }));
      const members = ["m1", "m2"].map((id) => ({ id, firstName: "Ana", lastName: "Lee", coverages: [cov(`c-${id}`)] }));
      return { ...base(), members, claims: all.slice(k) };
    },
  },
  {
    // Three groups of four plans; the plans gone are taken one group after another, never all of one.
    resource: "plans",
    walk: ["groups"],
    data: (k) => ({
      ...base(),
      groups: ["G1", "G2", "G3"].map((g, gi) => ({ id: `gp-${g}`, groupId: g, plans: [0, 1, 2, 3].filter((p) => p >= Math.floor((k + 2 - gi) / 3)).map((p) => ({ id: `${g}-p${p}`, name: "A" })) })),
    }),
  },
  {
    // Six members with two coverages each; each of the first k members drops its second one.
    resource: "coverages",
    walk: ["groups", "members"],
    data: (k) => ({
      ...base(),
      members: ids("m").slice(0, 6).map((id, i) => ({ id, firstName: "Ana", lastName: "Lee", coverages: i < k ? [cov(`${id}-a`)] : [cov(`${id}-a`), cov(`${id}-b`)] })),
    }),
  },
];

const countEdge: Partial<DeletePolicy> = { maxDeleteCount: 2, maxDeleteShare: 0, emptyScopeMin: 100 };
const shareEdge: Partial<DeletePolicy> = { maxDeleteCount: 0, maxDeleteShare: 0.25, emptyScopeMin: 100 };

describe.each(cases)("the delete guard on $resource (12 in scope)", (c) => {
  async function secondRun(k: number, deletePolicy: Partial<DeletePolicy>) {
    const t = setup();
    let d = c.data(0);
    const source = memorySource(() => d);
    const first = await syncStarted({ source, store: t.store, claimsWindow: window, resources: c.walk, groupConcurrency: 1 });
    expect(first.status).toBe("succeeded");
    const current = () => t.db.prepare(`SELECT COUNT(*) FROM ${c.resource}`).pluck().get() as number;
    expect(current()).toBe(12);
    d = c.data(k);
    const r = await syncStarted({ source, store: t.store, claimsWindow: window, resources: c.walk, groupConcurrency: 1, deletePolicy });
    return { r, current: current() };
  }

  it("deletes exactly maxDeleteCount (2), at any share", async () => {
    const { r, current } = await secondRun(2, countEdge);
    expect(r.error?.message).toBeUndefined();
    expect(r.resources[c.resource]?.deleted).toBe(2);
    expect(current).toBe(10);
  });

  it("refuses one more than maxDeleteCount (3), and deletes nothing", async () => {
    const { r, current } = await secondRun(3, countEdge);
    expect(r.error?.code).toBe("DELETE_GUARD");
    expect(r.error?.message).toContain(`${c.resource}: 3 of 12 (25.0%)`);
    expect(current).toBe(12);
  });

  it("deletes exactly maxDeleteShare of the scope (3 of 12 at 25%), past any count", async () => {
    const { r, current } = await secondRun(3, shareEdge);
    expect(r.error?.message).toBeUndefined();
    expect(r.resources[c.resource]?.deleted).toBe(3);
    expect(current).toBe(9);
  });

  it("refuses one more than maxDeleteShare (4 of 12), and deletes nothing", async () => {
    const { r, current } = await secondRun(4, shareEdge);
    expect(r.error?.code).toBe("DELETE_GUARD");
    expect(r.error?.message).toContain(`${c.resource}: 4 of 12 (33.3%)`);
    expect(current).toBe(12);
  });
});

/** Twelve claims of two members in G1 (G2 lists none); `movers` follow whichever group's claims are walked. */
function movingClaims(movers: ReadonlySet<string>) {
  const claims = ids("k").map((id, i) => ({ id, groupId: "G1", memberId: i % 2 === 0 ? "m1" : "m2", serviceDateFrom: "2026-02-01", claimStatus: "paid", paidAmount: "10.00" }));
  const state: { d: MemoryData } = {
    d: {
      ...base(),
      groups: ["G1", "G2"].map((g) => ({ id: `gp-${g}`, groupId: g, plans: [{ id: `p-${g}`, name: "A" }] })),
      members: ["m1", "m2"].map((id) => ({ id, firstName: "Ana", lastName: "Lee", coverages: [cov(`c-${id}`)] })),
      claims,
    },
  };
  const source = memorySource(() => state.d);
  let moving = false;
  const pages = source.pages.bind(source);
  source.pages = (resource, filters = {}, o) => {
    if (moving && resource === "claims" && filters.groupId !== undefined && filters.memberId === undefined) {
      state.d = { ...state.d, claims: state.d.claims.map((c) => (movers.has(c.id as string) ? { ...c, groupId: filters.groupId } : c)) };
    }
    return pages(resource, filters, o);
  };
  return { claims, source, state, startMoving: () => (moving = true) };
}

describe("claims listed twice in one walk (they moved to the group walked next)", () => {
  it("do not hide as many claims that are gone: those are still deleted", async () => {
    const t = setup();
    const m = movingClaims(new Set(ids("k").slice(4, 8)));
    const walk: WalkedResource[] = ["groups", "members", "claims"];
    expect((await syncStarted({ source: m.source, store: t.store, claimsWindow: window, resources: walk, groupConcurrency: 1 })).status).toBe("succeeded");
    // Four voided, four listed by both groups: 12 ids listed, as many as were stored.
    m.state.d = { ...m.state.d, claims: m.claims.slice(4) };
    m.startMoving();
    const r = await syncStarted({ source: m.source, store: t.store, claimsWindow: window, resources: walk, groupConcurrency: 1, deletePolicy: { maxDeleteCount: 100 } });
    expect(r.error?.message).toBeUndefined();
    expect(recordedChanges(t.db, r.runId).filter((c) => c.startsWith("claims delete"))).toEqual(ids("k").slice(0, 4).map((id) => `claims delete ${id}`));
    expect(t.db.prepare("SELECT id FROM claims ORDER BY id").pluck().all()).toEqual(ids("k").slice(4));
  });

  it("do not make the scope the share is taken of larger", async () => {
    const t = setup();
    const m = movingClaims(new Set(ids("k").slice(5, 9)));
    const walk: WalkedResource[] = ["groups", "members", "claims"];
    expect((await syncStarted({ source: m.source, store: t.store, claimsWindow: window, resources: walk, groupConcurrency: 1 })).status).toBe("succeeded");
    // Five voided (5 of 12: over 40%), four listed by both groups: 11 ids listed, 7 distinct, plus
    // 5 gone = 12 in scope (counted with the repeats, 16, and 5 would be under 40%).
    m.state.d = { ...m.state.d, claims: m.claims.slice(5) };
    m.startMoving();
    const r = await syncStarted({ source: m.source, store: t.store, claimsWindow: window, resources: walk, groupConcurrency: 1, deletePolicy: { ...shareEdge, maxDeleteShare: 0.4 } });
    expect(r.error?.code).toBe("DELETE_GUARD");
    expect(r.error?.message).toContain("claims: 5 of 12 (41.7%)");
    expect(t.db.prepare("SELECT COUNT(*) FROM claims").pluck().get()).toBe(12);
  });
});

describe("a scope that lists none of its records, at emptyScopeMin", () => {
  // G1's four members (and their coverages) all gone, while G2 keeps its one: count and share off.
  const members = (g1: number) => [
    ...ids("m").slice(0, g1).map((id) => ({ id, firstName: "Ana", lastName: "Lee", coverages: [cov(`c-${id}`)] })),
    { id: "z1", firstName: "Bo", lastName: "Lee", coverages: [cov("c-z1", "G2")] },
  ];
  const groups = ["G1", "G2"].map((g) => ({ id: `gp-${g}`, groupId: g, plans: [{ id: `p-${g}`, name: "A" }] }));
  async function emptyG1(emptyScopeMin: number) {
    const t = setup();
    let d: MemoryData = { ...base(), groups, members: members(4) };
    const source = memorySource(() => d);
    const walk: WalkedResource[] = ["groups", "members"];
    expect((await syncStarted({ source, store: t.store, claimsWindow: window, resources: walk })).status).toBe("succeeded");
    d = { ...d, members: members(0) };
    const r = await syncStarted({ source, store: t.store, claimsWindow: window, resources: walk, deletePolicy: { maxDeleteCount: 100, emptyScopeMin } });
    return { r, current: t.db.prepare("SELECT COUNT(*) FROM members").pluck().get() as number };
  }

  it("is refused when it would delete exactly emptyScopeMin (4) of its records", async () => {
    const { r, current } = await emptyG1(4);
    expect(r.error?.code).toBe("DELETE_GUARD");
    expect(r.error?.message).toContain("members?groupId=G1 listed no record where 4 were stored (a scope emptied: at least 4)");
    expect(current).toBe(5);
  });

  it("goes through when that is one fewer than emptyScopeMin (5)", async () => {
    const { r, current } = await emptyG1(5);
    expect(r.error?.message).toBeUndefined();
    expect(r.resources.members?.deleted).toBe(4);
    expect(current).toBe(1);
  });
});

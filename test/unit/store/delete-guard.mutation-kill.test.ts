/**
 * The delete guard at its edges, through real syncs of an in-memory source into a temp snapshot:
 * exactly at its count, exactly at its share, and at the empty-scope minimum the run passes and one
 * more is refused. The numbers are chosen here (20 designs stored, a policy written out), so the
 * expected counts and percentages never come from the guard itself.
 */
import { describe, expect, it } from "vitest";
import { memorySource, type MemoryData } from "../../helpers/memory-source.js";
import { recordedChanges } from "../../helpers/expected.js";
import { syncStarted, useTempStores } from "../../helpers/temp-store.js";

const window = { from: "2026-01-01", to: "2026-03-31" };
const designs = (n: number) => Array.from({ length: n }, (_, i) => ({ id: `d${String(i).padStart(2, "0")}`, name: `Design ${i}`, planType: "PPO" }));
const data = (n: number): MemoryData => ({ designs: designs(n), groups: [], members: [], claims: [] });

describe("the delete guard at its edges", () => {
  const setup = useTempStores();

  /** 20 designs stored, then a walk that lists `left` of them under `policy`. */
  async function dropTo(stored: number, left: number, policy: Record<string, number>) {
    const t = setup();
    let d = data(stored);
    const source = memorySource(() => d);
    await syncStarted({ source, store: t.store, claimsWindow: window, resources: ["designs"] });
    d = { ...d, designs: d.designs.slice(0, left) };
    const r = await syncStarted({ source, store: t.store, claimsWindow: window, resources: ["designs"], deletePolicy: policy });
    return { r, deletes: recordedChanges(t.db, r.runId).filter((c) => c.startsWith("designs delete")).length, current: t.db.prepare("SELECT COUNT(*) FROM designs").pluck().get() };
  }

  it("exactly maxDeleteCount deletes pass (the share is exceeded); one more is refused", async () => {
    // Share 0: any delete is over the share, so the count alone decides.
    const at = await dropTo(20, 15, { maxDeleteCount: 5, maxDeleteShare: 0 });
    expect(at.r.status).toBe("succeeded");
    expect(at.deletes).toBe(5);
    const over = await dropTo(20, 14, { maxDeleteCount: 5, maxDeleteShare: 0 });
    expect(over.r.status).toBe("failed");
    expect(over.r.error?.code).toBe("DELETE_GUARD");
    expect(over.r.error?.message).toContain("designs: 6 of 20 (30.0%), over the guard of 0% and 5 records");
    expect(over.current).toBe(20);
  });

  it("exactly maxDeleteShare of the scope passes (the count is exceeded); one more is refused", async () => {
    const at = await dropTo(20, 15, { maxDeleteCount: 1, maxDeleteShare: 0.25 });
    expect(at.r.status).toBe("succeeded");
    expect(at.deletes).toBe(5);
    const over = await dropTo(20, 14, { maxDeleteCount: 1, maxDeleteShare: 0.25 });
    expect(over.r.status).toBe("failed");
    expect(over.r.error?.message).toContain("designs: 6 of 20 (30.0%), over the guard of 25% and 1 records");
    expect(over.current).toBe(20);
  });

  it("a scope that lists nothing: one below emptyScopeMin passes, exactly emptyScopeMin is refused", async () => {
    const below = await dropTo(3, 0, { emptyScopeMin: 4, maxDeleteCount: 100 });
    expect(below.r.status).toBe("succeeded");
    expect(below.deletes).toBe(3);
    const at = await dropTo(4, 0, { emptyScopeMin: 4, maxDeleteCount: 100 });
    expect(at.r.status).toBe("failed");
    expect(at.r.error?.message).toContain("designs listed no record where 4 were stored (a scope emptied: at least 4)");
    expect(at.current).toBe(4);
    // A scope that still lists one record is not empty, whatever it loses.
    const one = await dropTo(6, 1, { emptyScopeMin: 4, maxDeleteCount: 100 });
    expect(one.r.status).toBe("succeeded");
    expect(one.deletes).toBe(5);
  });

  it("with an absence policy of 3, a record goes at its third consecutive absence, not its second", async () => {
    const t = setup();
    let d = data(3);
    const source = memorySource(() => d);
    const policy = { absenceRuns: 3 };
    await syncStarted({ source, store: t.store, claimsWindow: window, resources: ["designs"], deletePolicy: policy });
    d = data(2);
    const counts: string[][] = [];
    for (let i = 0; i < 3; i++) {
      const r = await syncStarted({ source, store: t.store, claimsWindow: window, resources: ["designs"], deletePolicy: policy });
      counts.push(recordedChanges(t.db, r.runId));
    }
    expect(counts).toEqual([[], [], ["designs delete d02"]]);
  });

  /** Two groups, G1 with `first` plans and G2 with `other`, then a walk where G1 lists `left` of its plans. */
  async function plansDropTo(first: number, left: number, policy: Record<string, number>, other = 2) {
    const t = setup();
    const plans = (g: string, n: number) => Array.from({ length: n }, (_, i) => ({ id: `${g}p${i}`, name: `Plan ${i}`, basePlanDesignId: "d00" }));
    const groups = (n: number) => [
      { id: "gp1", groupId: "G1", sponsorName: "Acme", plans: plans("G1", n) },
      { id: "gp2", groupId: "G2", sponsorName: "Zeta", plans: plans("G2", other) },
    ];
    let d: MemoryData = { ...data(1), groups: groups(first) };
    const source = memorySource(() => d);
    const resources = ["designs", "groups"] as const;
    await syncStarted({ source, store: t.store, claimsWindow: window, resources: [...resources] });
    d = { ...d, groups: groups(left) };
    const r = await syncStarted({ source, store: t.store, claimsWindow: window, resources: [...resources], deletePolicy: policy });
    return { r, deletes: recordedChanges(t.db, r.runId).filter((c) => c.startsWith("plans delete")).length, current: t.db.prepare("SELECT COUNT(*) FROM plans").pluck().get() };
  }

  it("children: groups that list no plan where emptyScopeMin were stored are refused, one fewer passes, one plan left passes; the share counts every plan", async () => {
    const below = await plansDropTo(3, 0, { emptyScopeMin: 4, maxDeleteCount: 100 }, 0);
    expect(below.r.status).toBe("succeeded");
    expect(below.deletes).toBe(3);
    const at = await plansDropTo(4, 0, { emptyScopeMin: 4, maxDeleteCount: 100 }, 0);
    expect(at.r.status).toBe("failed");
    expect(at.r.error?.message).toContain("listed no plans where 4 were stored (a scope emptied: at least 4)");
    expect(at.current).toBe(4);
    // Another group still lists a plan: the groups' listing is not empty, whatever G1 loses.
    const listed = await plansDropTo(4, 0, { emptyScopeMin: 4, maxDeleteCount: 100 }, 1);
    expect(listed.r.status).toBe("succeeded");
    expect(listed.deletes).toBe(4);
    // 6 plans in all: 2 of 6 is exactly a third, 3 of 6 is over it.
    const share = await plansDropTo(4, 2, { maxDeleteCount: 1, maxDeleteShare: 1 / 3, emptyScopeMin: 100 });
    expect(share.r.status).toBe("succeeded");
    expect(share.deletes).toBe(2);
    const over = await plansDropTo(4, 1, { maxDeleteCount: 1, maxDeleteShare: 1 / 3, emptyScopeMin: 100 });
    expect(over.r.status).toBe("failed");
    expect(over.r.error?.message).toContain("plans: 3 of 6 (50.0%), over the guard of 33% and 1 records");
  });
});

import { afterEach, describe, expect, it } from "vitest";
import { sync } from "../../../src/pipeline/sync.js";
import { inProcessPort, type SnapshotPort } from "../../../src/store/snapshot-port.js";
import { diffStates, expectedState, recordedChanges, snapshotState, stateToObject } from "../../helpers/expected.js";
import { memorySource, type MemoryData } from "../../helpers/memory-source.js";
import { syncStarted, TEST_PII_KEY, tempStore } from "../../helpers/temp-store.js";
import { waitUntil } from "../../helpers/wait.js";

const window = { from: "2026-01-01", to: "2026-03-31" };

function baseData(): MemoryData {
  return {
    designs: [{ id: "d1", name: "Gold", planType: "PPO", configuration: { deductible: "500.00" } }],
    groups: [
      { id: "gp1", groupId: "G1", sponsorName: "Acme", plans: [{ id: "p1", name: "Gold", basePlanDesignId: "d1" }] },
      { id: "gp2", groupId: "G2", sponsorName: "Zeta", plans: [{ id: "p2", name: "Gold", basePlanDesignId: "d1" }] },
    ],
    members: [
      member("m1", "Ana", "G1", "c1"),
      member("m2", "Zoë", "G1", "c2"),
      member("m3", "李", "G2", "c3"),
      { ...member("m4", "José", "G1", "c4"), coverages: [cov("c4", "G1"), cov("c5", "G2")] },
    ],
    claims: [claim("k1", "G1", "2026-02-01"), claim("k2", "G1", "2026-02-02"), claim("k3", "G2", "2026-03-01"), claim("k4", "G2", "2025-06-01")],
  };
}

function member(id: string, first: string, group: string, coverage: string) {
  return { id, firstName: first, lastName: "Nguyễn", ssn: `123-45-${id === "m1" ? "0001" : "0002"}`, dateOfBirth: "2000-02-29", address: { city: "Austin" }, coverages: [cov(coverage, group)] };
}
function cov(id: string, group: string) {
  return { id, groupId: group, status: "active", startDate: "2026-01-01", endDate: null };
}
function claim(id: string, group: string, date: string) {
  return { id, groupId: group, memberId: "m1", serviceDateFrom: date, claimStatus: "pending", claimAmount: "100.00", lines: [{ code: "99213", amount: "100.00" }] };
}

let cleanup: (() => void)[] = [];
afterEach(() => {
  for (const c of cleanup) c();
  cleanup = [];
});

function setup() {
  const t = tempStore();
  cleanup.push(t.cleanup);
  return t;
}

/** The expected snapshot: claims outside the window were never walked, so never stored. */
function inWindow(d: MemoryData): MemoryData {
  return { ...d, claims: d.claims.filter((c) => String(c.serviceDateFrom) >= window.from && String(c.serviceDateFrom) <= window.to) };
}

describe("sync engine against an in-memory source", () => {
  it("first run stores exactly the source's data, children split out, SSNs masked", async () => {
    const t = setup();
    const data = baseData();
    const report = await syncStarted({ source: memorySource(() => data), store: t.store, claimsWindow: window });
    expect(report.status).toBe("succeeded");
    expect(stateToObject(snapshotState(t.db))).toEqual(stateToObject(expectedState(inWindow(data), TEST_PII_KEY)));
    expect(report.resources.members?.inserted).toBe(4);
    expect(report.resources.coverages?.inserted).toBe(5);
    expect(report.resources.claims?.inserted).toBe(3);
    const row = t.db.prepare("SELECT ssn_token, ssn_last4, data FROM members WHERE id = 'm1'").get() as Record<string, string>;
    expect(row.ssn_last4).toBe("0001");
    expect(row.ssn_token).toMatch(/^[0-9a-f]{64}$/);
    expect(row.data).not.toContain("123-45");
  });

  it("a second run records exactly the changes, and an unchanged re-run records none", async () => {
    const t = setup();
    let data = baseData();
    const source = memorySource(() => data);
    const r1 = await syncStarted({ source, store: t.store, claimsWindow: window });
    data = baseData();
    data.members[0]!.firstName = "Anna"; // member update
    (data.members[1]!.coverages as Record<string, unknown>[])[0]!.status = "terminated"; // coverage update
    data.members.splice(2, 1); // m3 deleted (and c3)
    data.members.push(member("m9", "Chloé", "G2", "c9")); // insert
    data.claims[0]!.claimStatus = "paid";
    data.claims.push(claim("k9", "G2", "2026-03-02"));
    data.groups[0]!.plans = [];
    const r2 = await syncStarted({ source, store: t.store, claimsWindow: window });
    expect(r2.status).toBe("succeeded");
    const after = snapshotState(t.db);
    // The truth is what the source served in each run, not what the snapshot holds.
    expect(recordedChanges(t.db, r2.runId)).toEqual(diffStates(expectedState(inWindow(baseData()), TEST_PII_KEY), expectedState(inWindow(data), TEST_PII_KEY)));
    expect(stateToObject(after)).toEqual(stateToObject(expectedState(inWindow(data), TEST_PII_KEY)));
    expect(recordedChanges(t.db, r2.runId)).toContain("members update m1");
    expect(recordedChanges(t.db, r2.runId)).toContain("plans delete p1");
    const fields = t.db.prepare("SELECT changed_fields FROM changes WHERE run_id = ? AND id = 'm1'").pluck().get(r2.runId);
    expect(JSON.parse(fields as string)).toEqual(["firstName"]);
    const r3 = await syncStarted({ source, store: t.store, claimsWindow: window });
    expect(recordedChanges(t.db, r3.runId)).toEqual([]);
    expect(r3.resources.members?.unchanged).toBe(4);
    expect(r1.runId).toBeLessThan(r2.runId);
  });

  it("key order and page order change nothing", async () => {
    const t = setup();
    const data = baseData();
    await syncStarted({ source: memorySource(() => data), store: t.store, claimsWindow: window });
    const reversedKeys = (o: unknown): unknown =>
      Array.isArray(o) ? o.map(reversedKeys) : o && typeof o === "object" ? Object.fromEntries(Object.entries(o).reverse().map(([k, v]) => [k, reversedKeys(v)])) : o;
    const shuffled = reversedKeys(data) as MemoryData;
    const r = await syncStarted({ source: memorySource(() => shuffled, { pageSize: 2, shuffle: (i) => i.reverse() }), store: t.store, claimsWindow: window });
    expect(recordedChanges(t.db, r.runId)).toEqual([]);
  });

  it("a claims window never deletes claims outside it", async () => {
    const t = setup();
    let data = baseData();
    const source = memorySource(() => data);
    await syncStarted({ source, store: t.store, claimsWindow: { from: "2025-01-01", to: "2026-12-31" } });
    data = { ...baseData(), claims: [] };
    const r = await syncStarted({ source, store: t.store, claimsWindow: { from: "2026-02-01", to: "2026-02-28" }, resources: ["claims"] });
    expect(recordedChanges(t.db, r.runId)).toEqual(["claims delete k1", "claims delete k2"]);
    expect((t.db.prepare("SELECT id FROM claims ORDER BY id").pluck().all() as string[])).toEqual(["k3", "k4"]);
  });

  it("a persistent outage mid-walk fails the run, deletes nothing, and the next run converges", async () => {
    const t = setup();
    let data = baseData();
    await syncStarted({ source: memorySource(() => data), store: t.store, claimsWindow: window });
    data = baseData();
    data.members = data.members.slice(0, 1);
    data.members[0]!.lastName = "Changed";
    const failing = await syncStarted({ source: memorySource(() => data, { failFromFetch: 4, pageSize: 1 }), store: t.store, claimsWindow: window });
    expect(failing.status).toBe("failed");
    expect(failing.error?.message).toContain("simulated outage");
    expect(t.db.prepare("SELECT COUNT(*) FROM changes WHERE run_id = ? AND op = 'delete'").pluck().get(failing.runId)).toBe(0);
    expect(t.db.prepare("SELECT status FROM runs WHERE run_id = ?").pluck().get(failing.runId)).toBe("failed");
    const next = await syncStarted({ source: memorySource(() => data), store: t.store, claimsWindow: window });
    expect(next.status).toBe("succeeded");
    expect(next.resumedFrom).toBe(failing.runId);
    expect(stateToObject(snapshotState(t.db))).toEqual(stateToObject(expectedState(inWindow(data), TEST_PII_KEY)));
    const all = recordedChanges(t.db, [failing.runId, next.runId]);
    expect(new Set(all).size).toBe(all.length);
  });

  it("a page the store cannot apply fails the run, after the walks still going are done, and deletes nothing", async () => {
    const t = setup();
    let data = baseData();
    await syncStarted({ source: memorySource(() => data), store: t.store, claimsWindow: window });
    data = baseData();
    data.members = data.members.slice(1); // m1 is gone: a delete, if the run could finish
    const inner = inProcessPort(t.store);
    const applied: string[] = [];
    const walks: string[] = [];
    const port: SnapshotPort = {
      ...inner,
      applyPage: async (scope, page) => {
        // The store fails late: after the scope's walk has given its slot back and the next began.
        if (scope.key === "members?groupId=G1") {
          await waitUntil("the walk after the failing one", () => walks.includes("members?groupId=G2"));
          throw new Error("disk I/O error (simulated)");
        }
        await inner.applyPage(scope, page);
        applied.push(scope.key);
      },
    };
    const mem = memorySource(() => data, { pageSize: 1 });
    const source = {
      ...mem,
      pages: (resource: Parameters<typeof mem.pages>[0], filters: Parameters<typeof mem.pages>[1], o: Parameters<typeof mem.pages>[2]) => {
        if (!o?.startAfter) walks.push(`${resource}?groupId=${filters?.groupId}`);
        return mem.pages(resource, filters, o);
      },
    };
    const failed = await syncStarted({ source, store: port, claimsWindow: window, groupConcurrency: 1 });
    expect(failed.status).toBe("failed");
    expect(failed.error?.message).toContain("disk I/O error (simulated)");
    // The walks after the failing one were still fetched and stored: every other scope's pages arrived.
    expect(new Set(applied)).toEqual(new Set(["designs", "groups", "members?groupId=G2", "claims?from=2026-01-01&groupId=G1&to=2026-03-31", "claims?from=2026-01-01&groupId=G2&to=2026-03-31"]));
    expect(t.db.prepare("SELECT status FROM runs WHERE run_id = ?").pluck().get(failed.runId)).toBe("failed");
    expect(t.db.prepare("SELECT COUNT(*) FROM changes WHERE op = 'delete'").pluck().get()).toBe(0);
    const next = await syncStarted({ source: memorySource(() => data), store: t.store, claimsWindow: window });
    expect(next.status).toBe("succeeded");
    expect(stateToObject(snapshotState(t.db))).toEqual(stateToObject(expectedState(inWindow(data), TEST_PII_KEY)));
  });

  it("a walk gives its concurrency slot back when its pages are fetched, not when the store has applied them", async () => {
    const t = setup();
    const data = baseData();
    const inner = inProcessPort(t.store);
    const events: string[] = [];
    const port: SnapshotPort = {
      ...inner,
      applyPage: async (scope, page) => {
        // A slow store: the first group's members are applied only once the second group's walk
        // has begun. A walk that kept its slot until its pages were applied would never let it.
        if (scope.key === "members?groupId=G1") await waitUntil("the second group's walk", () => events.includes("walk members?groupId=G2"));
        await inner.applyPage(scope, page);
        if (page.end) events.push(`stored ${scope.key}`);
      },
    };
    const mem = memorySource(() => data);
    const source = {
      pages: (resource: Parameters<typeof mem.pages>[0], filters: Parameters<typeof mem.pages>[1], o: Parameters<typeof mem.pages>[2]) => {
        if (!o?.startAfter) events.push(`walk ${resource}?groupId=${filters?.groupId}`);
        return mem.pages(resource, filters, o);
      },
    };
    const report = await syncStarted({ source, store: port, claimsWindow: window, resources: ["members"], groupConcurrency: 1 });
    expect(report.status).toBe("succeeded");
    // With one slot, the second group's walk began while the first group's pages were still being stored.
    expect(events.indexOf("walk members?groupId=G2")).toBeLessThan(events.indexOf("stored members?groupId=G1"));
    expect(stateToObject(snapshotState(t.db)).members).toEqual(stateToObject(expectedState(data, TEST_PII_KEY)).members);
  });

  it("a store that lags holds the fetching back: pages fetched but not yet applied stay bounded", async () => {
    const t = setup();
    const data = baseData();
    data.members = Array.from({ length: 240 }, (_, i) => member(`m${String(i).padStart(3, "0")}`, "Ana", i % 2 ? "G1" : "G2", `c${i}`));
    const inner = inProcessPort(t.store);
    let fetched = 0;
    let applied = 0;
    let most = 0;
    // The store takes a page only once the fetching stands still. The walks and this source run on
    // promises alone (no timer, no I/O), so the fetching stands still exactly when the event loop
    // gets to its next turn: every walk then waits for room, or the source is done. No lag of a
    // fixed length: the store always lags as far as the walks let it.
    const held: (() => void)[] = [];
    const whenFetchingStandsStill = () =>
      new Promise<void>((resolve) => {
        if (held.push(resolve) === 1) setImmediate(() => held.splice(0).forEach((r) => r()));
      });
    const port: SnapshotPort = {
      ...inner,
      applyPage: async (scope, page) => {
        await whenFetchingStandsStill();
        await inner.applyPage(scope, page);
        applied++;
      },
    };
    const mem = memorySource(() => data, { pageSize: 1 });
    const source = {
      async *pages(...a: Parameters<typeof mem.pages>) {
        for await (const p of mem.pages(...a)) {
          fetched++;
          most = Math.max(most, fetched - applied);
          yield p;
        }
      },
    };
    const report = await syncStarted({ source, store: port, claimsWindow: window, resources: ["members"], groupConcurrency: 4 });
    expect(report.status).toBe("succeeded");
    expect(fetched).toBeGreaterThan(240);
    // 48 pages in flight to the store, plus the page each walk holds while it waits for room; and
    // the store was handed as many as that (the fetching ran ahead until held back).
    expect(most).toBeLessThanOrEqual(48 + 4);
    expect(most).toBeGreaterThanOrEqual(48);
  });

  it("the delete guard fails the run before anything is applied, and --allow-deletes lets it through", async () => {
    const t = setup();
    let data = baseData();
    data.claims = Array.from({ length: 120 }, (_, i) => claim(`k${String(i).padStart(3, "0")}`, "G1", "2026-02-01"));
    const source = memorySource(() => data, { pageSize: 50 });
    await syncStarted({ source, store: t.store, claimsWindow: window });
    const before = snapshotState(t.db);
    data = { ...baseData(), claims: data.claims.slice(0, 20) };
    data.members[0]!.firstName = "Changed";
    const blocked = await syncStarted({ source, store: t.store, claimsWindow: window });
    expect(blocked.status).toBe("failed");
    expect(blocked.error?.code).toBe("DELETE_GUARD");
    expect(blocked.error?.message).toMatch(/claims: 100 of 120 \(83\.3%\).*--allow-deletes/);
    expect(stateToObject(snapshotState(t.db))).toEqual(stateToObject(before));
    expect(recordedChanges(t.db, blocked.runId)).toEqual([]);
    const allowed = await syncStarted({ source, store: t.store, claimsWindow: window, deletePolicy: { allowDeletes: true } });
    expect(allowed.status).toBe("succeeded");
    expect(allowed.resources.claims?.deleted).toBe(100);
  });

  it("an item without an id is quarantined and its scope deletes nothing", async () => {
    const t = setup();
    let data = baseData();
    const source = memorySource(() => data);
    await syncStarted({ source, store: t.store, claimsWindow: window });
    data = baseData();
    data.members = data.members.filter((m) => m.id !== "m2");
    data.members.splice(1, 0, { firstName: "NoId", ssn: "999-88-7777", coverages: [cov("cx", "G1")] });
    const r = await syncStarted({ source, store: t.store, claimsWindow: window });
    expect(r.status).toBe("succeeded");
    expect(r.resources.members?.quarantined).toBe(1);
    expect(recordedChanges(t.db, r.runId).filter((c) => c.includes("delete"))).toEqual([]);
    const q = t.db.prepare("SELECT reason, excerpt FROM quarantine WHERE run_id = ?").get(r.runId) as { reason: string; excerpt: string };
    expect(q.reason).toContain("no id");
    expect(q.excerpt).not.toContain("999-88-7777");
  });

  it("an id that comes back after a delete is an insert again, with its history intact", async () => {
    const t = setup();
    let data = baseData();
    const source = memorySource(() => data);
    await syncStarted({ source, store: t.store, claimsWindow: window });
    data = baseData();
    data.designs = [];
    const r2 = await syncStarted({ source, store: t.store, claimsWindow: window, resources: ["designs"] });
    expect(recordedChanges(t.db, r2.runId)).toEqual(["designs delete d1"]);
    data = baseData();
    const r3 = await syncStarted({ source, store: t.store, claimsWindow: window, resources: ["designs"] });
    expect(recordedChanges(t.db, r3.runId)).toEqual(["designs insert d1"]);
    const history = t.db.prepare("SELECT valid_from_run, valid_to_run FROM designs_history WHERE id = 'd1' ORDER BY valid_from_run").all();
    expect(history).toEqual([
      { valid_from_run: 1, valid_to_run: r2.runId },
      { valid_from_run: r3.runId, valid_to_run: null },
    ]);
  });

  it("with an absence policy of 2, a record is deleted at the second consecutive complete absence", async () => {
    const t = setup();
    let data = baseData();
    const source = memorySource(() => data);
    const policy = { absenceRuns: 2 };
    await syncStarted({ source, store: t.store, claimsWindow: window, deletePolicy: policy, resources: ["designs"] });
    data = { ...baseData(), designs: [] };
    const r2 = await syncStarted({ source, store: t.store, claimsWindow: window, deletePolicy: policy, resources: ["designs"] });
    expect(recordedChanges(t.db, r2.runId)).toEqual([]);
    const r3 = await syncStarted({ source, store: t.store, claimsWindow: window, deletePolicy: policy, resources: ["designs"] });
    expect(recordedChanges(t.db, r3.runId)).toEqual(["designs delete d1"]);
  });

  it("a dry run says what it would change and applies nothing", async () => {
    const t = setup();
    let data = baseData();
    const source = memorySource(() => data);
    await syncStarted({ source, store: t.store, claimsWindow: window });
    const runsBefore = t.db.prepare("SELECT COUNT(*) FROM runs").pluck().get();
    const before = snapshotState(t.db);
    data = baseData();
    data.members[0]!.firstName = "Dry";
    data.designs = [];
    const r = await syncStarted({ source, store: t.store, claimsWindow: window, dryRun: true });
    expect(r.dryRun).toBe(true);
    expect(r.resources.members?.updated).toBe(1);
    expect(r.resources.designs?.deleted).toBe(1);
    expect(stateToObject(snapshotState(t.db))).toEqual(stateToObject(before));
    expect(t.db.prepare("SELECT COUNT(*) FROM runs").pluck().get()).toBe(runsBefore);
  });
});

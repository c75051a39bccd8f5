/**
 * The snapshot never lies: one test per reproduced defect of the trust issue (each failed on the
 * code before its fix). Real SQLite files; the walk on an in-memory source that serves pages as
 * bytes, so that the page cache is exercised as over HTTP.
 */
import BetterSqlite3 from "better-sqlite3";
import { afterEach, describe, expect, it } from "vitest";
import { sync } from "../../../src/pipeline/sync.js";
import { openDatabase } from "../../../src/store/file/database.js";
import { SnapshotStore } from "../../../src/store/snapshot.js";
import { defaultDeletePolicy } from "../../../src/store/runs/run-state.js";
import { scopeOf } from "../../../src/store/walk/scopes.js";
import { confirmScope } from "../../../src/extract/scopes.js";
import { expectedState, recordedChanges, snapshotState, stateToObject } from "../../helpers/expected.js";
import { memorySource, rawMemorySource, type MemoryData } from "../../helpers/memory-source.js";
import { TEST_PII_KEY, syncStarted, tempStore, type TempStore } from "../../helpers/temp-store.js";

const window = { from: "2026-01-01", to: "2026-03-31" };
const ONE = { groupConcurrency: 1 };

let cleanup: (() => void)[] = [];
afterEach(() => {
  for (const c of cleanup.reverse()) c();
  cleanup = [];
});
function setup(): TempStore {
  const t = tempStore();
  cleanup.push(t.cleanup);
  return t;
}

const cov = (id: string, group: string, status = "active") => ({ id, groupId: group, status, startDate: "2026-01-01", endDate: null });
const member = (id: string, covs: ReturnType<typeof cov>[], first = "Ana") => ({ id, firstName: first, lastName: "Lee", ssn: "123-45-6789", coverages: covs });
const claim = (id: string, group: string, memberId: string, date: string) => ({ id, groupId: group, memberId, serviceDateFrom: date, claimStatus: "paid", paidAmount: "10.00" });

function data(members: Record<string, unknown>[], extra: Partial<MemoryData> = {}): MemoryData {
  return {
    designs: [{ id: "d1", name: "Gold" }],
    groups: [
      { id: "gp1", groupId: "G1", plans: [{ id: "p1", name: "A" }] },
      { id: "gp2", groupId: "G2", plans: [{ id: "p2", name: "B" }] },
    ],
    members,
    claims: [],
    ...extra,
  };
}

const sixInG1 = () => ["a", "b", "c", "d", "e", "f"].map((id) => member(id, [cov(`c-${id}`, "G1")]));

describe("1. a page the store fails to apply", () => {
  it("stops the walk, fails the run, deletes nothing; the resumed run sees the page again and deletes nothing", async () => {
    const t = setup();
    const d = data(sixInG1());
    const store = new SnapshotStore(t.db, { piiKey: TEST_PII_KEY, commitEveryPages: 1 });
    const r1 = await syncStarted({ source: rawMemorySource(() => d), store, claimsWindow: window, resources: ["groups", "members"], ...ONE });
    expect(r1.status).toBe("succeeded");
    // Another process takes the write lock while page 2 of G1's members is fetched, and lets go at page 3.
    t.db.pragma("busy_timeout = 0");
    const other = new BetterSqlite3(t.path);
    cleanup.push(() => other.close());
    let membersFetches = 0;
    const source = rawMemorySource(() => d, {
      onFetch: (_n, resource) => {
        if (resource !== "members") return;
        membersFetches++;
        if (membersFetches === 2) other.exec("BEGIN IMMEDIATE; INSERT INTO _absence (resource, id, count) VALUES ('analyst', 'x', 1);");
        if (membersFetches === 3 && other.inTransaction) other.exec("ROLLBACK");
      },
    });
    const r2 = await syncStarted({ source, store, claimsWindow: window, resources: ["groups", "members"], ...ONE });
    expect(r2.status).toBe("failed");
    expect(r2.error?.code).toBe("SQLITE_BUSY");
    expect(recordedChanges(t.db, r2.runId).filter((c) => c.includes("delete"))).toEqual([]);
    // The walk stopped at the failed page: no later page of that scope moved the cursor past it.
    const walk = t.db.prepare("SELECT complete FROM _walk WHERE run_id = ? AND scope = 'members?groupId=G1'").pluck().get(r2.runId);
    expect(walk).toBe(0);
    const r3 = await syncStarted({ source: rawMemorySource(() => d), store, claimsWindow: window, resources: ["groups", "members"], ...ONE });
    expect(r3.status).toBe("succeeded");
    expect(r3.resumedFrom).toBe(r2.runId);
    expect(recordedChanges(t.db, r3.runId)).toEqual([]);
    expect(stateToObject(snapshotState(t.db)).members).toEqual(stateToObject(expectedState(d, TEST_PII_KEY)).members);
  });

  it("after SQLite rolls a transaction back on its own, the store does not carry on as if inside one", async () => {
    const t = setup();
    const d = data(sixInG1());
    const store = new SnapshotStore(t.db, { piiKey: TEST_PII_KEY, commitEveryPages: 100 });
    await syncStarted({ source: memorySource(() => d, { pageSize: 2 }), store, claimsWindow: window, ...ONE });
    const port = {
      ...(await import("../../../src/store/snapshot-port.js")).inProcessPort(store),
    };
    let pages = 0;
    const applyPage = port.applyPage;
    port.applyPage = async (scope, page) => {
      if (scope.resource === "members" && ++pages === 2) {
        // What SQLite does on SQLITE_FULL or an I/O error: the transaction is gone.
        if (t.db.inTransaction) t.db.exec("ROLLBACK");
        throw Object.assign(new Error("database or disk is full"), { code: "SQLITE_FULL" });
      }
      return applyPage(scope, page);
    };
    const r = await sync({ source: memorySource(() => d, { pageSize: 2 }), store: port, claimsWindow: window, ...ONE });
    expect(r.status).toBe("failed");
    expect(r.error?.code).toBe("SQLITE_FULL");
    expect(t.db.inTransaction).toBe(false);
    expect(t.db.prepare("SELECT status FROM _runs WHERE run_id = ?").pluck().get(r.runId)).toBe("failed");
    const again = await syncStarted({ source: memorySource(() => d, { pageSize: 2 }), store, claimsWindow: window, ...ONE });
    expect(again.status).toBe("succeeded");
    expect(recordedChanges(t.db, again.runId)).toEqual([]);
  });
});

/** The snapshot on this thread, or on its own (the CLI's way: needs the build the test setup makes). */
const ports = [
  ["on this thread", async (t: TempStore) => t.store],
  [
    "on its own thread",
    async (t: TempStore) => {
      const { openWorkerSnapshot } = await import("../../../src/store/worker-port.js");
      const w = await openWorkerSnapshot(t.path, { piiKey: TEST_PII_KEY, commitEveryPages: 2 });
      cleanup.push(() => void w.close());
      return w;
    },
  ],
] as const;

describe.each(ports)("2. a page recognised by its bytes (snapshot %s)", (_name, open) => {
  it("is trusted only when every record on it was applied from it (a member in two groups)", async () => {
    const t = setup();
    const store = await open(t);
    const both = (first: string) => member("m", [cov("c1", "G1"), cov("c2", "G2")], first);
    let d = data([both("Ana")]);
    const src = (o: Parameters<typeof rawMemorySource>[1] = {}) => rawMemorySource(() => d, o);
    await syncStarted({ source: src(), store, claimsWindow: window, ...ONE });
    // The member changes between the walks of G1 and G2: G1's page has the old version, G2's the new.
    let switched = false;
    const r2 = await syncStarted({
      source: src({
        onFetch: (_n, resource, f) => {
          if (resource === "members" && f.groupId === "G2" && !switched) {
            switched = true;
            d = data([both("Anna")]);
          }
        },
      }),
      store,
      claimsWindow: window,
      ...ONE,
    });
    expect(r2.status).toBe("succeeded");
    // Now both groups list the new version; G2 is walked first this time.
    d = { ...data([both("Anna")]), groups: [...data([]).groups].reverse() };
    const r3 = await syncStarted({ source: src(), store, claimsWindow: window, ...ONE });
    expect(r3.status).toBe("succeeded");
    expect(t.db.prepare("SELECT firstName FROM members WHERE id = 'm'").pluck().get()).toBe("Anna");
  });

  it("5. a cursor cycle through known pages fails the run in bounded time; the failed run's pages are never trusted", async () => {
    const t = setup();
    const store = await open(t);
    const d = data(["a", "b", "c", "d"].map((id) => member(id, [cov(`c-${id}`, "G1")])));
    await syncStarted({ source: rawMemorySource(() => d), store, claimsWindow: window, resources: ["groups", "members"] });
    // Now the page after "d" leads back to "b": b -> [c, d] -> [x, b] -> [c, d] -> ...
    const cyclic = () =>
      rawMemorySource(() => d, {
        override: (resource, _f, after) => (resource === "members" && after === "d" ? [member("x", [cov("c-x", "G1")]), member("b", [cov("c-b", "G1")])] : undefined),
        onFetch: (n) => {
          if (n > 100) throw new Error("runaway walk: the cycle was not detected");
        },
      });
    for (let i = 0; i < 2; i++) {
      const source = cyclic();
      const r = await syncStarted({ source, store, claimsWindow: window, resources: ["groups", "members"] });
      expect(r.status).toBe("failed");
      expect(r.error?.code).toBe("PAGINATION");
      expect(source.fetches).toBeLessThan(20);
      expect(t.db.prepare("SELECT COUNT(*) FROM _pages WHERE run_id = ?").pluck().get(r.runId)).toBe(0);
    }
  });
});

describe("3. a run killed elsewhere", () => {
  it("is recognised dead by its lapsed lease; a live one makes sync report busy without throwing; abandon ends it", async () => {
    const t = setup();
    const d = data(sixInG1());
    let now = new Date("2026-11-23T02:00:00Z");
    const clock = () => now;
    const store = new SnapshotStore(t.db, { piiKey: TEST_PII_KEY, now: clock, leaseMs: 60_000 });
    await syncStarted({ source: memorySource(() => d), store, claimsWindow: window });
    // A run of a container that was killed: another host, a lease that ends in a minute.
    t.db
      .prepare("INSERT INTO _runs (job, status, started_at, options, pid, host, fresh, owner, lease_until) VALUES ('sync', 'running', ?, '{}', 1, 'old-container', '[]', 'x', ?)")
      .run(now.toISOString(), new Date(now.getTime() + 60_000).toISOString());
    const busy = await sync({ source: memorySource(() => d), store, claimsWindow: window });
    expect(busy.status).toBe("busy");
    expect(busy.runId).toBeNull();
    expect(busy.error?.code).toBe("SNAPSHOT_BUSY");
    expect(busy.error?.message).toMatch(/benefits-sync runs --abandon \d+/);
    now = new Date(now.getTime() + 61_000);
    const r = await syncStarted({ source: memorySource(() => d), store, claimsWindow: window });
    expect(r.status).toBe("succeeded");
    expect(t.db.prepare("SELECT error FROM _runs WHERE host = 'old-container'").pluck().get()).toMatch(/^ABANDONED: its lease lapsed/);
    // By hand:
    t.db
      .prepare("INSERT INTO _runs (job, status, started_at, options, pid, host, fresh, owner, lease_until) VALUES ('sync', 'running', ?, '{}', 1, 'elsewhere', '[]', 'y', ?)")
      .run(now.toISOString(), new Date(now.getTime() + 3_600_000).toISOString());
    const id = t.db.prepare("SELECT run_id FROM _runs WHERE host = 'elsewhere'").pluck().get() as number;
    const { abandonRun } = await import("../../../src/store/runs/run-lease.js");
    abandonRun(t.db, id, now);
    expect(t.db.prepare("SELECT status FROM _runs WHERE run_id = ?").pluck().get(id)).toBe("failed");
    expect(() => abandonRun(t.db, id, now)).toThrow(/not running/);
    expect((await syncStarted({ source: memorySource(() => d), store, claimsWindow: window })).status).toBe("succeeded");
  });

  it("two overlapping starts on one file: only one proceeds", async () => {
    const t = setup();
    const second = new SnapshotStore(openDatabase(t.path), { piiKey: TEST_PII_KEY });
    cleanup.push(() => second.db.close());
    t.store.startRun("sync", {});
    expect(() => second.startRun("sync", {})).toThrow(expect.objectContaining({ code: "SNAPSHOT_BUSY" }));
    expect(t.db.prepare("SELECT COUNT(*) FROM _runs WHERE status = 'running'").pluck().get()).toBe(1);
  });
});

describe("4. child deletes and the delete guard", () => {
  const groupsWithPlans = (n: number) =>
    ["G1", "G2", "G3"].map((g, i) => ({ id: `gp${i}`, groupId: g, plans: Array.from({ length: n }, (_, k) => ({ id: `${g}-p${k}`, name: "x" })) }));

  it("a groups listing with plans: [] everywhere fails the run and applies nothing; --allow-deletes lets it through", async () => {
    const t = setup();
    let d: MemoryData = { ...data([]), groups: groupsWithPlans(2) };
    await syncStarted({ source: memorySource(() => d), store: t.store, claimsWindow: window, resources: ["groups"] });
    const before = snapshotState(t.db);
    d = { ...d, groups: groupsWithPlans(0) };
    const r = await syncStarted({ source: memorySource(() => d), store: t.store, claimsWindow: window, resources: ["groups"] });
    expect(r.status).toBe("failed");
    expect(r.error?.code).toBe("DELETE_GUARD");
    expect(r.error?.message).toMatch(/plans: .*listed no plans where 6 were stored/);
    expect(stateToObject(snapshotState(t.db))).toEqual(stateToObject(before));
    const ok = await syncStarted({ source: memorySource(() => d), store: t.store, claimsWindow: window, resources: ["groups"], deletePolicy: { allowDeletes: true } });
    expect(ok.status).toBe("succeeded");
    expect(ok.resources.plans?.deleted).toBe(6);
  });

  it("claims: a group whose listing drops to none fails the run; deletes in one group never count against another that lists none", async () => {
    const t = setup();
    const eight = ["a", "b", "c", "d", "e", "f", "g", "h"].map((id, i) => claim(`k-${id}`, "G1", ["a", "b", "c", "d", "e", "f"][i % 6]!, "2026-02-01"));
    let d = data(sixInG1(), { claims: eight });
    const all = ["groups", "members", "claims"] as const;
    expect((await syncStarted({ source: memorySource(() => d), store: t.store, claimsWindow: window, resources: [...all] })).status).toBe("succeeded");
    // Six of G1's claims voided; G1 still lists two, G2 (no claims ever) lists none, as before.
    d = data(sixInG1(), { claims: eight.slice(6) });
    const r = await syncStarted({ source: memorySource(() => d), store: t.store, claimsWindow: window, resources: [...all] });
    expect(r.error?.message).toBeUndefined();
    expect(r.resources.claims?.deleted).toBe(6);
    // The last two go as well: G1's listing now drops to none, which the guard refuses.
    d = data(sixInG1(), { claims: [] });
    const more = await syncStarted({ source: memorySource(() => d), store: t.store, claimsWindow: window, resources: [...all], deletePolicy: { emptyScopeMin: 2 } });
    expect(more.error?.code).toBe("DELETE_GUARD");
    expect(more.error?.message).toMatch(/claims\?[^ ]*groupId=G1[^ ]* listed no record where 2 were stored/);
    expect(more.error?.message).not.toMatch(/groupId=G2/);
  });

  it("coverages: [] for every member of a group fails the run too", async () => {
    const t = setup();
    let d = data(sixInG1());
    await syncStarted({ source: memorySource(() => d), store: t.store, claimsWindow: window, resources: ["groups", "members"] });
    // The service lists G1's members, but with empty coverage lists (a broken answer).
    const broken = sixInG1().map((m) => ({ ...m, coverages: [] }));
    const src = memorySource(() => d);
    const pages = src.pages.bind(src);
    src.pages = (resource, filters, o) => (resource === "members" ? memorySource(() => ({ ...d, members: broken }), { pageSize: 3 }).pages("members", {}, o) : pages(resource, filters, o));
    const r = await syncStarted({ source: src, store: t.store, claimsWindow: window, resources: ["groups", "members"] });
    expect(r.status).toBe("failed");
    expect(r.error?.message).toMatch(/coverages: .*members\?groupId=G1 listed no coverages where 6 were stored/);
    expect(t.db.prepare("SELECT COUNT(*) FROM coverages").pluck().get()).toBe(6);
    d = data(sixInG1());
  });

  it("one plan dropped from one group is an ordinary delete", async () => {
    const t = setup();
    let d: MemoryData = { ...data([]), groups: groupsWithPlans(2) };
    await syncStarted({ source: memorySource(() => d), store: t.store, claimsWindow: window, resources: ["groups"] });
    d = { ...d, groups: d.groups.map((g, i) => (i === 0 ? { ...g, plans: (g.plans as unknown[]).slice(1) } : g)) };
    const r = await syncStarted({ source: memorySource(() => d), store: t.store, claimsWindow: window, resources: ["groups"] });
    expect(r.status).toBe("succeeded");
    expect(recordedChanges(t.db, r.runId)).toEqual(["plans delete G1-p0"]);
  });
});

describe("8. moves are updates, not deletes", () => {
  it("a coverage that moves between two members on one page is one update", async () => {
    const t = setup();
    let d = data([member("m1", [cov("c1", "G1"), cov("c9", "G1")]), member("m2", [cov("c2", "G1")])]);
    await syncStarted({ source: memorySource(() => d, { pageSize: 10 }), store: t.store, claimsWindow: window });
    d = data([member("m1", [cov("c1", "G1")]), member("m2", [cov("c2", "G1"), cov("c9", "G1")])]);
    const r = await syncStarted({ source: memorySource(() => d, { pageSize: 10 }), store: t.store, claimsWindow: window });
    expect(recordedChanges(t.db, r.runId)).toEqual(["coverages update c9"]);
    expect(t.db.prepare("SELECT memberId FROM coverages WHERE id = 'c9'").pluck().get()).toBe("m2");
    expect(t.db.prepare("SELECT ended_by FROM _coverages_v WHERE id = 'c9' AND valid_to_run IS NOT NULL").pluck().all()).toEqual(["update"]);
  });

  it("a coverage that moves to a member on a later page is one update too", async () => {
    const t = setup();
    let d = data([member("m1", [cov("c1", "G1"), cov("c9", "G1")]), member("m2", [cov("c2", "G1")]), member("m3", [cov("c3", "G1")])]);
    await syncStarted({ source: memorySource(() => d, { pageSize: 1 }), store: t.store, claimsWindow: window });
    d = data([member("m1", [cov("c1", "G1")]), member("m2", [cov("c2", "G1")]), member("m3", [cov("c3", "G1"), cov("c9", "G1")])]);
    const r = await syncStarted({ source: memorySource(() => d, { pageSize: 1 }), store: t.store, claimsWindow: window });
    expect(recordedChanges(t.db, r.runId)).toEqual(["coverages update c9"]);
  });

  it("a claim whose service date moves out of the window is updated, not deleted; a claim really gone is deleted", async () => {
    const t = setup();
    let d = data([member("m1", [cov("c1", "G1")])], { claims: [claim("k1", "G1", "m1", "2026-02-01"), claim("k2", "G1", "m1", "2026-02-02")] });
    await syncStarted({ source: memorySource(() => d), store: t.store, claimsWindow: window });
    d = { ...d, claims: [claim("k1", "G1", "m1", "2025-06-01")] };
    const r = await syncStarted({ source: memorySource(() => d), store: t.store, claimsWindow: window });
    expect(r.status).toBe("succeeded");
    expect(recordedChanges(t.db, r.runId)).toEqual(["claims delete k2", "claims update k1"]);
    expect(t.db.prepare("SELECT serviceDateFrom FROM claims WHERE id = 'k1'").pluck().get()).toBe("2025-06-01");
    // Only the claims asked about were looked up: nothing outside the window was added.
    expect(t.db.prepare("SELECT COUNT(*) FROM claims").pluck().get()).toBe(1);
  });

  it("a first run into an empty snapshot: a claim or coverage that moves mid-walk is stored once (sim seed 1182)", async () => {
    const t = setup();
    let d = data([member("m1", [cov("c1", "G1"), cov("cx", "G1")]), member("m2", [cov("c2", "G2")])], {
      claims: [claim("k1", "G1", "m1", "2026-02-01")],
    });
    let moved = false;
    const source = rawMemorySource(() => d, {
      onFetch: (_n, resource, f) => {
        // After G1's members and claims were walked, cx moves to m2 and k1 to G2.
        if (!moved && resource === "claims" && f.groupId === "G2") {
          moved = true;
          d = data([member("m1", [cov("c1", "G1")]), member("m2", [cov("c2", "G2"), cov("cx", "G2")])], { claims: [claim("k1", "G2", "m1", "2026-02-01")] });
        }
      },
    });
    // Members first for both groups, then claims: make the coverage move land between member walks too.
    const r = await syncStarted({ source, store: t.store, claimsWindow: window, ...ONE });
    expect(r.status).toBe("succeeded");
    for (const [view, id] of [["claims", "k1"], ["coverages", "cx"]] as const) {
      expect(t.db.prepare(`SELECT COUNT(*) FROM ${view} WHERE id = ?`).pluck().get(id)).toBe(1);
      expect(t.db.prepare("SELECT COUNT(*) FROM changes WHERE run_id = ? AND id = ?").pluck().get(r.runId, id)).toBe(1);
    }
    expect(t.db.prepare("SELECT groupId FROM claims WHERE id = 'k1'").pluck().get()).toBe("G2");
  });

});

describe("records that move out of sight during a walk are not deleted (sim seed 1196)", () => {
  it("a member that moves from a group not yet walked to one already walked is looked up, not deleted", async () => {
    const t = setup();
    let d = data([member("m1", [cov("c1", "G1")]), member("m2", [cov("c2", "G2")]), member("gone", [cov("c3", "G2")])]);
    await syncStarted({ source: rawMemorySource(() => d), store: t.store, claimsWindow: window, ...ONE });
    let moved = false;
    const source = rawMemorySource(() => d, {
      onFetch: (_n, resource, f) => {
        if (!moved && resource === "members" && f.groupId === "G2") {
          // G1 was walked; now m2's coverage moves to G1, and "gone" really goes.
          moved = true;
          d = data([member("m1", [cov("c1", "G1")]), member("m2", [cov("c2", "G1")])]);
        }
      },
    });
    const r = await syncStarted({ source, store: t.store, claimsWindow: window, ...ONE });
    expect(r.status).toBe("succeeded");
    expect(recordedChanges(t.db, r.runId)).toEqual(["coverages delete c3", "coverages update c2", "members delete gone"]);
  });

  it("a coverage that moves to a member already read is found by reading its group again", async () => {
    const t = setup();
    let d = data(["a", "b", "c", "d"].map((id) => member(id, id === "d" ? [cov("c-d", "G1"), cov("cx", "G1")] : [cov(`c-${id}`, "G1")])));
    await syncStarted({ source: rawMemorySource(() => d), store: t.store, claimsWindow: window, ...ONE });
    let fetches = 0;
    const source = rawMemorySource(() => d, {
      onFetch: (_n, resource) => {
        // After the first page (a, b) is read, cx moves from d (page 2) to a (page 1).
        if (resource === "members" && ++fetches === 2) {
          d = data(["a", "b", "c", "d"].map((id) => member(id, id === "a" ? [cov("c-a", "G1"), cov("cx", "G1")] : [cov(`c-${id}`, "G1")])));
        }
      },
    });
    const r = await syncStarted({ source, store: t.store, claimsWindow: window, ...ONE });
    expect(r.status).toBe("succeeded");
    expect(recordedChanges(t.db, r.runId).filter((c) => c.startsWith("coverages"))).toEqual(["coverages update cx"]);
    expect(t.db.prepare("SELECT memberId FROM coverages WHERE id = 'cx'").pluck().get()).toBe("a");
  });

  it("a plan that moves to a group already read is found by reading the groups again; a plan really gone is deleted", async () => {
    const t = setup();
    const groups = (g1: string[], g2: string[], g3: string[]) =>
      [g1, g2, g3].map((plans, i) => ({ id: `gp${i}`, groupId: `G${i}`, plans: plans.map((id) => ({ id, name: id })) }));
    let d: MemoryData = { ...data([]), groups: groups(["p0"], ["p1"], ["p2", "px", "py"]) };
    await syncStarted({ source: rawMemorySource(() => d), store: t.store, claimsWindow: window, resources: ["groups"] });
    let fetches = 0;
    const source = rawMemorySource(() => d, {
      onFetch: (_n, resource) => {
        if (resource === "groups" && ++fetches === 2) d = { ...d, groups: groups(["p0", "px"], ["p1"], ["p2"]) };
      },
    });
    const r = await syncStarted({ source, store: t.store, claimsWindow: window, resources: ["groups"] });
    expect(r.status).toBe("succeeded");
    expect(recordedChanges(t.db, r.runId).filter((c) => c.startsWith("plans"))).toEqual(["plans delete py", "plans update px"]);
  });

  it("a record seen twice in one run changes once: the later sighting amends the run's version (sim seed 3392)", async () => {
    const t = setup();
    let d = data([member("m1", [cov("c1", "G1")]), member("m2", [cov("c2", "G2")])], { claims: [claim("k1", "G1", "m1", "2026-02-01")] });
    await syncStarted({ source: rawMemorySource(() => d), store: t.store, claimsWindow: window, ...ONE });
    // k1 is paid in G1's walk; then, before G2's claims are walked, it moves to G2 and is adjusted again.
    d = { ...d, claims: [{ ...claim("k1", "G1", "m1", "2026-02-01"), claimStatus: "denied" }] };
    let moved = false;
    const source = rawMemorySource(() => d, {
      onFetch: (_n, resource, f) => {
        if (!moved && resource === "claims" && f.groupId === "G2") {
          moved = true;
          d = { ...d, claims: [{ ...claim("k1", "G2", "m1", "2026-02-01"), claimStatus: "denied", paidAmount: "0.00" }] };
        }
      },
    });
    const r = await syncStarted({ source, store: t.store, claimsWindow: window, ...ONE });
    expect(recordedChanges(t.db, r.runId)).toEqual(["claims update k1"]);
    const fields = JSON.parse(t.db.prepare("SELECT changed_fields FROM changes WHERE run_id = ? AND id = 'k1'").pluck().get(r.runId) as string);
    expect(fields).toEqual(["claimStatus", "groupId", "paidAmount"]);
    expect(t.db.prepare("SELECT COUNT(*) FROM claims_history WHERE id = 'k1'").pluck().get()).toBe(2);
    // The typed columns follow the amended version.
    expect(t.db.prepare("SELECT groupId, claimStatus, paidAmount, paidAmount_cents FROM claims WHERE id = 'k1'").get()).toEqual({ groupId: "G2", claimStatus: "denied", paidAmount: "0.00", paidAmount_cents: 0 });
  });

  it("a lookup whose answer holds an item without an id proves nothing: the claim it asked about stays (sim seed 4732)", async () => {
    const t = setup();
    let d = data([member("m1", [cov("c1", "G1")])], { claims: [claim("k1", "G1", "m1", "2026-02-01"), claim("k2", "G1", "m1", "2026-02-02")] });
    await syncStarted({ source: rawMemorySource(() => d), store: t.store, claimsWindow: window, ...ONE });
    // k1's date moves out of the window; the lookup of m1's claims answers it without its id.
    d = { ...d, claims: [claim("k1", "G1", "m1", "2026-05-01"), claim("k2", "G1", "m1", "2026-02-02")] };
    const noId = (resource: string, f: Record<string, string | undefined>, after: string | undefined) =>
      resource === "claims" && f.memberId === "m1" && after === undefined ? d.claims.map((c) => (c.id === "k1" ? { ...c, id: undefined } : c)) : undefined;
    const r = await syncStarted({ source: rawMemorySource(() => d, { override: noId }), store: t.store, claimsWindow: window, ...ONE });
    expect(r.status).toBe("succeeded");
    expect(recordedChanges(t.db, r.runId)).toEqual([]);
    expect(t.db.prepare("SELECT COUNT(*) FROM quarantine WHERE run_id = ?").pluck().get(r.runId)).toBe(1);
    // Read whole, the lookup finds k1 where it moved.
    const r2 = await syncStarted({ source: rawMemorySource(() => d), store: t.store, claimsWindow: window, ...ONE });
    expect(recordedChanges(t.db, r2.runId)).toEqual(["claims update k1"]);
  });

  it("a child delete whose confirming listing held an item without an id waits for a whole one", async () => {
    const t = setup();
    const withCx = (holder: string) => data(["a", "b", "c", "d"].map((id) => member(id, id === holder ? [cov(`c-${id}`, "G1"), cov("cx", "G1")] : [cov(`c-${id}`, "G1")])));
    let d = withCx("d");
    await syncStarted({ source: rawMemorySource(() => d), store: t.store, claimsWindow: window, ...ONE });
    let fetches = 0;
    let walked = false;
    const source = rawMemorySource(() => d, {
      onFetch: (_n, resource, f) => {
        // After the first page (a, b) is read, cx moves from d (page 2) to a (page 1).
        if (resource === "members" && ++fetches === 2) d = withCx("a");
        if (resource === "members" && f.groupId === "G2") walked = true;
      },
      // The confirming re-read of G1 (after G2's walk) answers a without its id.
      override: (resource, f, after) =>
        walked && resource === "members" && f.groupId === "G1" && after === undefined ? d.members.slice(0, 2).map((m) => (m.id === "a" ? { ...m, id: undefined } : m)) : undefined,
    });
    const r = await syncStarted({ source, store: t.store, claimsWindow: window, ...ONE });
    expect(r.status).toBe("succeeded");
    expect(t.db.prepare("SELECT COUNT(*) FROM quarantine WHERE run_id = ?").pluck().get(r.runId)).toBe(1);
    expect(recordedChanges(t.db, r.runId).filter((c) => c.startsWith("coverages"))).toEqual([]);
    expect(t.db.prepare("SELECT memberId FROM coverages WHERE id = 'cx'").pluck().get()).toBe("d");
    const r2 = await syncStarted({ source: rawMemorySource(() => d), store: t.store, claimsWindow: window, ...ONE });
    expect(recordedChanges(t.db, r2.runId).filter((c) => c.startsWith("coverages"))).toEqual(["coverages update cx"]);
  });

  it("a child delete left for later is made by the next run, although its parent's page did not change again (sim seed 7074)", async () => {
    const t = setup();
    const members = (withCx: boolean) => data(["a", "b"].map((id) => member(id, id === "a" && withCx ? [cov("c-a", "G1"), cov("cx", "G1")] : [cov(`c-${id}`, "G1")])));
    let d = members(true);
    await syncStarted({ source: rawMemorySource(() => d), store: t.store, claimsWindow: window, ...ONE });
    d = members(false);
    let walked = false;
    const source = rawMemorySource(() => d, {
      onFetch: (_n, resource, f) => {
        if (resource === "members" && f.groupId === "G2") walked = true;
      },
      // The confirming re-read of G1 answers b without its id.
      override: (resource, f, after) =>
        walked && resource === "members" && f.groupId === "G1" && after === undefined ? d.members.map((m) => (m.id === "b" ? { ...m, id: undefined } : m)) : undefined,
    });
    const r = await syncStarted({ source, store: t.store, claimsWindow: window, ...ONE });
    expect(r.status).toBe("succeeded");
    expect(t.db.prepare("SELECT COUNT(*) FROM quarantine WHERE run_id = ?").pluck().get(r.runId)).toBe(1);
    expect(recordedChanges(t.db, r.runId)).toEqual([]);
    const r2 = await syncStarted({ source: rawMemorySource(() => d), store: t.store, claimsWindow: window, ...ONE });
    expect(recordedChanges(t.db, r2.runId)).toEqual(["coverages delete cx"]);
  });

  it("a lookup begun before is read again from its start: by the run that resumes it, and in a later round (sim seed 20044)", () => {
    // A confirming listing applies only the parents that list what it asks about. One begun by a
    // failed run asked about other coverages: resumed past its first pages, it would miss a parent
    // there that lists the coverage asked about now, and the coverage would be deleted.
    const t = setup();
    const s = t.store;
    const walk = scopeOf("members", { groupId: "G1" });
    const confirm = confirmScope("members", "G1");
    const first = s.startRun("sync", {});
    s.beginScope(walk);
    s.applyPage(walk, [member("a", [cov("c-a", "G1")]), member("b", [cov("c-b", "G1")])], "b", false);
    expect(s.beginScope(confirm)).toMatchObject({ cursor: undefined, complete: false });
    s.applyPage(confirm, [member("a", [cov("c-a", "G1")])], "a", false);
    expect(s.finishRun(defaultDeletePolicy, { code: "HTTP_ERROR", message: "the service failed mid-confirmation" }).status).toBe("failed");
    const second = s.startRun("sync", {});
    expect(second.resumedFrom).toBe(first.runId);
    // The walk resumes where it stopped; the lookup starts over.
    expect(s.beginScope(walk)).toMatchObject({ cursor: "b", complete: false });
    expect(s.beginScope(confirm)).toMatchObject({ cursor: undefined, complete: false });
    s.applyPage(confirm, [member("a", [cov("c-a", "G1")])], undefined, true);
    expect(s.beginScope(confirm)).toMatchObject({ cursor: undefined, complete: false });
  });

  it("a member or claim whose group is gone from the listing can still be proven deleted (sim seeds 5209, 6860)", async () => {
    const t = setup();
    const groups3 = [...data([]).groups, { id: "gp3", groupId: "G3", plans: [] }];
    let d: MemoryData = {
      ...data([member("m1", [cov("c1", "G1")]), member("m3", [cov("c3", "G3")])], { claims: [claim("k1", "G1", "m1", "2026-02-01"), claim("k3", "G3", "m3", "2026-02-02")] }),
      groups: groups3,
    };
    await syncStarted({ source: memorySource(() => d), store: t.store, claimsWindow: window });
    // G3, its one member and that member's claim go on the same day.
    d = data([member("m1", [cov("c1", "G1")])], { claims: [claim("k1", "G1", "m1", "2026-02-01")] });
    const r = await syncStarted({ source: memorySource(() => d), store: t.store, claimsWindow: window });
    expect(r.status).toBe("succeeded");
    expect(recordedChanges(t.db, r.runId)).toEqual(["claims delete k3", "coverages delete c3", "groups delete gp3", "members delete m3"]);
  });
});

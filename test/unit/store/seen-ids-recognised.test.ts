/**
 * The exact count of claims seen (a scan of every id the walk listed) is what lets a walk that
 * listed a moved claim twice still see a claim really gone. It is made only when a page of the
 * walk was read: the page cache never holds two pages that list one id, so a walk whose every page
 * was recognised by its bytes listed each id once. These tests hold both halves: the count, and
 * the cache forgetting a walk that listed an id twice (on a snapshot loaded from empty, and on a
 * later walk).
 */
import { describe, expect, it } from "vitest";
import { inProcessPort } from "../../../src/store/snapshot-port.js";
import { SeenIds } from "../../../src/store/walk/seen-ids.js";
import { rawMemorySource, type MemoryData } from "../../helpers/memory-source.js";
import { syncStarted, useTempStores } from "../../helpers/temp-store.js";

const window = { from: "2026-01-01", to: "2026-03-31" };

describe("seen ids of recognised pages", () => {
  const setup = useTempStores();

  it("pages all recognised: their ids are counted as listed, with no scan (the cache holds each id once)", () => {
    const { db } = setup();
    const seen = new SeenIds(db);
    // Two recognised pages that share an id: the cache never holds such a pair, so the count
    // trusts them. 4 ids listed, 4 counted.
    seen.markPage("claims", '["a","b"]', false, true);
    seen.markPage("claims", '["b","c"]', false, true);
    expect(seen.count("claims", true)).toBe(4);
    expect(seen.duplicated("claims")).toBe(false);
  });

  it("one page read: the count is exact again, and the walk is known to have listed an id twice", () => {
    const { db } = setup();
    const seen = new SeenIds(db);
    seen.markPage("claims", '["a","b"]', false, true);
    seen.markPage("claims", '["b","c"]');
    expect(seen.count("claims")).toBe(4);
    expect(seen.count("claims", true)).toBe(3);
    expect(seen.duplicated("claims")).toBe(true);
    // A page marked after the count was taken is counted too.
    seen.markPage("claims", '["d"]', false, true);
    expect(seen.count("claims", true)).toBe(4);
    // Another resource's read page says nothing of this one.
    const other = new SeenIds(setup().db);
    other.markPage("groups", '["g1"]');
    other.markPage("claims", '["a","a"]', false, true);
    expect(other.count("claims", true)).toBe(2);
  });

  it("a page walked again or re-read counts as read; a rolled-back read takes its note with it; clear forgets it", () => {
    const { db } = setup();
    const seen = new SeenIds(db);
    seen.markPage("claims", '["a","b"]', false, true);
    expect(() =>
      db.transaction(() => {
        seen.markPage("claims", '["b"]');
        throw new Error("page failed");
      })(),
    ).toThrow("page failed");
    seen.markPage("claims", '["b"]', false, true);
    expect(seen.count("claims", true)).toBe(3);
    seen.markPage("claims", '["a","c"]', true, true);
    expect(seen.count("claims")).toBe(4);
    expect(seen.count("claims", true)).toBe(3);
    // A second process on the same walk (a resumed run) reads the note from the file.
    expect(new SeenIds(db).count("claims", true)).toBe(3);
    seen.clear();
    seen.markPage("claims", '["x","x"]', false, true);
    expect(seen.count("claims", true)).toBe(2);
  });
});

describe("the page cache after a walk that listed a claim twice", () => {
  const setup = useTempStores();
  const claim = (id: string, group: string, amount: number) => ({ id, groupId: group, memberId: "m1", serviceDateFrom: "2026-02-01", billedAmount: amount });
  const world = (): MemoryData => ({
    designs: [{ id: "d1", name: "Gold" }],
    groups: ["G1", "G2"].map((g) => ({ id: `gp-${g}`, groupId: g, plans: [{ id: `p-${g}`, name: "A" }] })),
    members: [],
    claims: [claim("c1", "G1", 10), claim("c2", "G1", 20), claim("c3", "G1", 30), claim("c4", "G2", 40), claim("c5", "G2", 50)],
  });
  const claimPages = (db: ReturnType<typeof setup>["db"]) => db.prepare("SELECT COUNT(*) FROM _pages WHERE scope LIKE 'claims?%'").pluck().get() as number;
  /** A source over `data` that moves c1 to G2 once G1's claims have been listed. */
  const movingSource = (data: MemoryData) =>
    rawMemorySource(() => data, {
      onFetch: (_n, resource, f) => {
        if (resource === "claims" && f.groupId === "G2") data.claims[0] = claim("c1", "G2", 10);
      },
    });
  const sync = (t: ReturnType<typeof setup>, source: ReturnType<typeof rawMemorySource>) =>
    syncStarted({ source, store: inProcessPort(t.store), claimsWindow: window, resources: ["groups", "claims"], groupConcurrency: 1 });

  it("loaded from empty: the claims' pages are forgotten (a load without the move keeps 3: next test)", async () => {
    const t = setup();
    const r = await sync(t, movingSource(world()));
    expect(r.status).toBe("succeeded");
    expect(t.db.prepare("SELECT groupId FROM claims WHERE id = 'c1'").pluck().all()).toEqual(["G2"]);
    expect(claimPages(t.db)).toBe(0);
  });

  it("a later walk: the claims' pages are forgotten, and the walk after reads them and keeps them", async () => {
    const t = setup();
    expect((await sync(t, rawMemorySource(world))).status).toBe("succeeded");
    // 3 claims of G1 on 2 pages, 2 of G2 on 1.
    expect(claimPages(t.db)).toBe(3);
    const moved = world();
    expect((await sync(t, movingSource(moved))).status).toBe("succeeded");
    expect(t.db.prepare("SELECT groupId FROM claims WHERE id = 'c1'").pluck().all()).toEqual(["G2"]);
    expect(claimPages(t.db)).toBe(0);
    // c5 is really gone: the next walk reads every claims page, sees it missing, and deletes it.
    moved.claims = moved.claims.filter((c) => c.id !== "c5");
    const after = await sync(t, rawMemorySource(() => moved));
    expect(after.status).toBe("succeeded");
    expect(t.db.prepare("SELECT id FROM claims ORDER BY id").pluck().all()).toEqual(["c1", "c2", "c3", "c4"]);
    expect(claimPages(t.db)).toBe(2);
  });
});

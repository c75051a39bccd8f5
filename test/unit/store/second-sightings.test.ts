/**
 * A member listed in two groups is applied from the first page that lists it; the other group's
 * page lists it as a second sighting. That page is remembered (recognised by its bytes next time)
 * only when the member's text on it is that of the version the snapshot holds as the run ends
 * (PageCache.settle); before, no such page was remembered, and at 100k members a tenth of a walk's
 * member pages were read again on every run.
 */
import { describe, expect, it } from "vitest";
import { inProcessPort, type SnapshotPort } from "../../../src/store/snapshot-port.js";
import { rawMemorySource, type MemoryData } from "../../helpers/memory-source.js";
import { syncStarted, useTempStores, type TempStore } from "../../helpers/temp-store.js";

const setup = useTempStores();
const window = { from: "2026-01-01", to: "2026-03-31" };
const ONE = { resources: ["groups", "members"] as ("groups" | "members")[], groupConcurrency: 1 };
const cov = (id: string, groupId: string) => ({ id, groupId, status: "active", startDate: "2026-01-01", endDate: null });
const member = (id: string, firstName: string, groups: string[]) => ({ id, firstName, lastName: id, coverages: groups.map((g) => cov(`c-${id}-${g}`, g)) });

/** m2 and m5 are covered in both groups: G2's pages list them after G1's were applied. */
function world(names: Record<string, string> = {}): MemoryData {
  const both = new Set(["m2", "m5"]);
  return {
    designs: [],
    groups: ["G1", "G2"].map((g) => ({ id: `gp-${g}`, groupId: g, plans: [{ id: `p-${g}`, name: "A" }] })),
    members: Array.from({ length: 8 }, (_, i) => `m${i}`).map((id, i) => member(id, names[id] ?? "Ana", both.has(id) ? ["G1", "G2"] : [i % 2 ? "G2" : "G1"])),
    claims: [],
  };
}

/** A port that counts the member pages the walk recognised and those it read. */
function counting(base: SnapshotPort): { port: SnapshotPort; seen: { known: number; read: number } } {
  const seen = { known: 0, read: 0 };
  return {
    seen,
    port: {
      ...base,
      applyPage: (scope, page) => {
        const listed = (page.lazy?.ids ?? page.raw ?? page.items ?? page.prepared?.records ?? []).length;
        if (scope.resource === "members" && page.known) seen.known++;
        else if (scope.resource === "members" && listed > 0) seen.read++;
        return base.applyPage(scope, page);
      },
    },
  };
}

const memberPages = (t: TempStore) =>
  t.db.prepare("SELECT scope, ids, vids FROM _pages WHERE scope LIKE 'members?%' ORDER BY scope, cursor").all() as { scope: string; ids: string; vids: string | null }[];

describe("a member page with a second sighting", () => {
  it("is remembered as a load from empty ends, with the member's version id, and recognised from then on", async () => {
    const t = setup();
    const src = () => rawMemorySource(() => world());
    await syncStarted({ source: src(), store: inProcessPort(t.store), claimsWindow: window, ...ONE });
    const pages = memberPages(t);
    const g2 = pages.filter((p) => p.scope.includes("G2"));
    // G2 lists m1, m2, m3, m5, m7 in pages of two: every one remembered, m2's and m5's included.
    expect(g2.map((p) => JSON.parse(p.ids) as string[])).toEqual([["m1", "m2"], ["m3", "m5"], ["m7"]]);
    const current = (id: string) => t.db.prepare("SELECT vid FROM _members_v WHERE id = ? AND valid_to_run IS NULL").pluck().get(id) as number;
    for (const p of pages) {
      expect(p.vids).not.toBeNull();
      expect([...(JSON.parse(p.vids!) as number[])].sort()).toEqual((JSON.parse(p.ids) as string[]).map(current).sort());
    }

    const again = counting(inProcessPort(t.store));
    const r = await syncStarted({ source: src(), store: again.port, claimsWindow: window, ...ONE });
    expect(r.status).toBe("succeeded");
    expect(again.seen.read).toBe(0);
    expect(again.seen.known).toBe(pages.length);
    expect(t.db.prepare("SELECT COUNT(*) FROM members").pluck().get()).toBe(8);
  });

  it("is forgotten when the member's text on it is not the version kept (it changed between the two listings), and read again", async () => {
    const t = setup();
    let d = world();
    const src = (o: Parameters<typeof rawMemorySource>[1] = {}) => rawMemorySource(() => d, o);
    await syncStarted({ source: src(), store: inProcessPort(t.store), claimsWindow: window, ...ONE });
    // m2 is renamed once G1's pages are read: G1's page kept "Ana", G2's lists "Anna".
    let renamed = false;
    const r2 = await syncStarted({
      source: src({
        onFetch: (_n, resource, f) => {
          if (resource === "members" && f.groupId === "G2" && !renamed) {
            renamed = true;
            d = world({ m2: "Anna" });
          }
        },
      }),
      store: inProcessPort(t.store),
      claimsWindow: window,
      ...ONE,
    });
    expect(r2.status).toBe("succeeded");
    expect(t.db.prepare("SELECT firstName FROM members WHERE id = 'm2'").pluck().get()).toBe("Ana");
    const g2 = memberPages(t).filter((p) => p.scope.includes("G2"));
    expect(g2.map((p) => JSON.parse(p.ids) as string[])).toEqual([["m3", "m5"], ["m7"]]);
    expect(g2.every((p) => p.vids !== null)).toBe(true);

    // The next walk reads G1's changed page (m2 is "Anna" there now) and G2's forgotten one.
    const third = counting(inProcessPort(t.store));
    const r3 = await syncStarted({ source: src(), store: third.port, claimsWindow: window, ...ONE });
    expect(r3.status).toBe("succeeded");
    expect(third.seen.read).toBe(2);
    expect(t.db.prepare("SELECT firstName FROM members WHERE id = 'm2'").pluck().get()).toBe("Anna");
  });

  it("is not left behind, unsettled, by a run that fails", async () => {
    const t = setup();
    const d = world();
    await syncStarted({ source: rawMemorySource(() => d), store: inProcessPort(t.store), claimsWindow: window, ...ONE });
    t.db.exec("DELETE FROM _pages");
    // The second walk reads every page again, and fails on G2's last one.
    const r = await syncStarted({
      source: rawMemorySource(() => d, {
        override: (resource, f, after) => {
          if (resource === "members" && f.groupId === "G2" && after === "m5") throw new Error("the service went away");
          return undefined;
        },
      }),
      store: inProcessPort(t.store),
      claimsWindow: window,
      ...ONE,
    });
    expect(r.status).toBe("failed");
    expect(t.db.prepare("SELECT COUNT(*) FROM _pages").pluck().get()).toBe(0);
    expect(t.db.prepare("SELECT COUNT(*) FROM temp._pages_unsettled").pluck().get()).toBe(0);
  });
});

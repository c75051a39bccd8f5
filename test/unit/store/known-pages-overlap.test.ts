/**
 * A scope's walk asks the store for the pages it knows (to recognise them by their bytes) while
 * its first page is being fetched, not before: the store answers behind the pages queued there,
 * and a round trip per scope before its first request held every walk up. The answer must still
 * be what the first page is checked against.
 */
import { afterEach, expect, it } from "vitest";
import { inProcessPort, type PageInput, type SnapshotPort } from "../../../src/store/snapshot-port.js";
import { recordedChanges } from "../../helpers/expected.js";
import { rawMemorySource, type MemoryData } from "../../helpers/memory-source.js";
import { syncStarted, tempStore, type TempStore } from "../../helpers/temp-store.js";
import { waitUntil } from "../../helpers/wait.js";

const window = { from: "2026-01-01", to: "2026-03-31" };
let t: TempStore | undefined;
afterEach(() => t?.cleanup());

const member = (n: number, group: string) => ({
  id: `m${n}`,
  firstName: "Ana",
  lastName: `L${n}`,
  ssn: "123-45-6789",
  coverages: [{ id: `c${n}`, groupId: group, status: "active", startDate: "2026-01-01", endDate: null }],
});
const data: MemoryData = {
  designs: [{ id: "d1", name: "Gold" }],
  groups: ["G1", "G2", "G3"].map((g) => ({ id: `gp-${g}`, groupId: g, plans: [{ id: `p-${g}`, name: "A" }] })),
  members: Array.from({ length: 15 }, (_, i) => member(i, `G${(i % 3) + 1}`)),
  claims: [],
};

it("asks for a scope's known pages as its first page is fetched, and recognises every page all the same", async () => {
  t = tempStore();
  const resources = ["groups", "members"] as const;
  await syncStarted({ source: rawMemorySource(() => data), store: inProcessPort(t.store), claimsWindow: window, resources: [...resources] });
  const events: string[] = [];
  const pages = { known: 0, read: 0 };
  const base = inProcessPort(t.store);
  // A store that answers late (busy with other pages): only once the scope's first page has been
  // fetched. A walk that waited for this answer before fetching would never get it (and fail here).
  // It also counts how each member page arrives.
  const fetchOf = (scope: string) => {
    const group = /groupId=([^&]+)/.exec(scope)?.[1];
    return `fetch ${scope.split("?")[0]}${group ? ` ${group}` : ""}`;
  };
  const slow: SnapshotPort = {
    ...base,
    knownPages: async (scope) => {
      await waitUntil(`the first fetch of ${scope}`, () => events.includes(fetchOf(scope)));
      events.push(`answer ${scope}`);
      return base.knownPages(scope);
    },
    applyPage: (scope, page: PageInput) => {
      if (scope.resource === "members" && (page.raw?.length || page.known)) pages[page.known ? "known" : "read"]++;
      return base.applyPage(scope, page);
    },
  };
  const source = rawMemorySource(() => data, { onFetch: (_n, resource, f) => events.push(`fetch ${resource}${f.groupId ? ` ${f.groupId}` : ""}`) });
  const again = await syncStarted({ source, store: slow, claimsWindow: window, resources: [...resources], groupConcurrency: 1 });
  expect(again.status).toBe("succeeded");
  expect(recordedChanges(t.db, again.runId)).toEqual([]);
  // 5 members per group, 2 per page: 3 pages each, every one recognised by its bytes.
  expect(pages).toEqual({ known: 9, read: 0 });
  for (const g of ["G1", "G2", "G3"]) {
    const fetched = events.indexOf(`fetch members ${g}`);
    const answered = events.findIndex((e) => e.startsWith("answer members") && e.includes(g));
    expect(fetched).toBeGreaterThanOrEqual(0);
    expect(answered).toBeGreaterThan(fetched);
  }
});

import { describe, expect, it } from "vitest";
import { createClient } from "../../../src/api/client.js";
import { PaginationError } from "../../../src/errors.js";
import { json, apiTestFixture, oid, type TestServer } from "./harness.js";

const KEY = "pg-key-5d1e0c7b93aa";
const { probe, start } = apiTestFixture(KEY);
let server: TestServer | undefined;

const members = Array.from({ length: 23 }, (_, i) => ({ id: oid(i), firstName: `F${i}` }));

/** A list endpoint over `members` with the given page sizes and end-of-list style. */
function listHandler(sizes: number[], end: "empty" | "hasMore") {
  let call = 0;
  return (_req: unknown, res: Parameters<typeof json>[0], hit: { url: URL }) => {
    const after = hit.url.searchParams.get("startAfter");
    const from = after === null ? 0 : members.findIndex((m) => m.id === after) + 1;
    const size = sizes[Math.min(call++, sizes.length - 1)]!;
    const page = members.slice(from, from + size);
    if (end === "hasMore") json(res, 200, { data: page, hasMore: from + size < members.length, totalCount: members.length });
    else json(res, 200, { data: page });
  };
}

const clientFor = (url: string) => createClient({ baseUrl: url, apiKey: KEY, logger: probe.logger, retry: { maxAttempts: 1 } });

describe("pagination against a real server", () => {
  it("walks several pages and ends on an empty page", async () => {
    server = await start(listHandler([10], "empty"));
    const c = clientFor(server.url);
    const ids: string[] = [];
    for await (const m of c.listMembers()) ids.push(m.id);
    expect(ids).toEqual(members.map((m) => m.id));
    expect(server.hits.map((h) => h.url.searchParams.get("startAfter"))).toEqual([null, oid(9), oid(19), oid(22)]);
    await c.close();
  });

  it("ends on hasMore: false without asking for one more page", async () => {
    server = await start(listHandler([10], "hasMore"));
    const c = clientFor(server.url);
    const pages = [];
    for await (const p of c.pages("members")) pages.push(p);
    expect(pages.flatMap((p) => p.items)).toHaveLength(23);
    expect(server.hits).toHaveLength(3);
    await c.close();
  });

  it("does not stop at a short page", async () => {
    server = await start(listHandler([10, 3, 10], "empty"));
    const c = clientFor(server.url);
    const pages = [];
    for await (const p of c.pages("members")) pages.push(p.items.length);
    expect(pages).toEqual([10, 3, 10]);
    await c.close();
  });

  it("stops a stuck cursor with a clear error, after the one repeated page", async () => {
    server = await start((_req, res) => json(res, 200, { data: members.slice(0, 5) }));
    const c = clientFor(server.url);
    const err = await probe.reject(
      (async () => {
        for await (const _ of c.pages("members")) void _;
      })(),
    );
    expect(err).toBeInstanceOf(PaginationError);
    expect((err as Error).message).toMatch(/page 1 \(startAfter=id-00004\) repeats id "id-00000"/);
    // Bounded in requests, not in seconds: the repeat is seen on the second page.
    expect(server.hits).toHaveLength(2);
    await c.close();
  });
});

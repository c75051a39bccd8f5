import { request } from "undici";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { AuthError, PermissionError, NotFoundError, ApiError } from "../../../src/errors.js";
import { startSandbox, type Sandbox } from "../../../src/sandbox/index.js";
import { ErrorBody } from "../../../schemas/error-body.js";
import { clientFor, walk } from "./walk-helpers.js";

let sb: Sandbox;
beforeAll(async () => {
  sb = await startSandbox({ seed: 21, members: 1500, groups: 6 });
});
afterAll(() => sb.close());

async function raw(path: string, key: string | undefined = sb.keys.full, method: "GET" | "POST" = "GET"): Promise<{ status: number; body: any; headers: Record<string, unknown> }> {
  const res = await request(`${sb.baseUrl}${path}`, { method, headers: key ? { authorization: `Bearer ${key}` } : {} });
  const text = await res.body.text();
  let body: unknown = text;
  try {
    body = JSON.parse(text);
  } catch {}
  return { status: res.statusCode, body, headers: res.headers };
}

describe("reads through the client", () => {
  it("walks every list resource completely, in createdAt-then-id order, matching the ground truth", async () => {
    const client = clientFor(sb);
    for (const r of ["designs", "groups", "members", "claims"] as const) {
      const items = await walk(client, r);
      const truth = [...sb.iterate(r)];
      expect(items.length).toBe(truth.length);
      expect(items).toEqual(JSON.parse(JSON.stringify(truth)));
      const keys = items.map((x) => `${x.createdAt as string}|${x.id as string}`);
      expect(keys).toEqual([...keys].sort());
    }
    await client.close();
  });

  it("typed walkers validate every item against the project's schemas", async () => {
    const client = clientFor(sb);
    let n = 0;
    for await (const m of client.listMembers({ status: "active" })) {
      expect(m.coverages?.some((c) => c.status === "active")).toBe(true);
      n++;
    }
    expect(n).toBeGreaterThan(100);
    const groups = [];
    for await (const g of client.listGroups()) groups.push(g);
    expect(groups.every((g) => (g.plans?.length ?? 0) > 0)).toBe(true);
    await client.close();
  });

  it("serves pages of 50 by default and 100 for members; honours limit up to those", async () => {
    expect((await raw("/v2/members")).body.data).toHaveLength(100);
    expect((await raw("/v1/claims/medical")).body.data).toHaveLength(50);
    expect((await raw("/v2/members?limit=7")).body.data).toHaveLength(7);
    expect((await raw("/v2/members?limit=500")).body.data).toHaveLength(100);
    expect((await raw("/v1/claims/medical?limit=1000")).body.data).toHaveLength(50);
    const bad = await raw("/v2/members?limit=zero");
    expect(bad.status).toBe(400);
    expect(ErrorBody.parse(bad.body).errors?.[0]?.path).toEqual(["limit"]);
  });

  it("pages on with startAfter and ends with hasMore false", async () => {
    const first = (await raw("/v2/members?limit=3")).body;
    expect(first.hasMore).toBe(true);
    const next = (await raw(`/v2/members?limit=3&startAfter=${first.data[2].id}`)).body;
    const truth = [...sb.iterate("members")].slice(3, 6).map((m) => m.id);
    expect(next.data.map((m: { id: string }) => m.id)).toEqual(truth);
    const designs = (await raw("/v2/designs")).body;
    expect(designs.hasMore).toBe(false);
    const unknown = await raw("/v2/members?startAfter=nope");
    expect(unknown.status).toBe(400);
  });

  it("filters members by group number, plan, status and dates; members can appear under two groups", async () => {
    const client = clientFor(sb);
    const groups = await walk(client, "groups");
    const all = [...sb.iterate("members")];
    let twoGroupMembers = 0;
    for (const g of groups) {
      const listed = await walk(client, "members", { groupId: g.groupId as string });
      const expected = all.filter((m) => m.coverages.some((c) => c.groupId === g.groupId)).map((m) => m.id);
      expect(listed.map((m) => m.id)).toEqual(expected);
      twoGroupMembers += listed.filter((m) => new Set((m.coverages as { groupId: string }[]).map((c) => c.groupId)).size > 1).length;
    }
    expect(twoGroupMembers).toBeGreaterThan(0);
    const plan = (groups[groups.length - 1]?.plans as { id: string }[])[0]?.id as string;
    const byPlan = await walk(client, "members", { planId: plan });
    expect(byPlan.length).toBeGreaterThan(0);
    expect(byPlan.every((m) => (m.coverages as { planId: string }[]).some((c) => c.planId === plan))).toBe(true);
    const terminated = await walk(client, "members", { status: "terminated", terminationDate: "2025-12-31" });
    expect(terminated.length).toBeGreaterThan(0);
    expect(terminated.every((m) => (m.coverages as { status: string; endDate: string | null }[]).some((c) => c.status === "terminated" && c.endDate !== null && c.endDate <= "2025-12-31"))).toBe(true);
    const bad = await raw("/v2/members?status=gone");
    expect(bad.status).toBe(400);
    expect(bad.body.errors[0].path).toEqual(["status"]);
    await client.close();
  });

  it("filters claims by group number, member and an inclusive service-date range", async () => {
    const client = clientFor(sb);
    const all = [...sb.iterate("claims")];
    const gid = all[0]?.groupId as string;
    const listed = await walk(client, "claims", { groupId: gid, serviceDateFrom: "2025-10-01", serviceDateTo: "2025-10-31" });
    const expected = all.filter((c) => c.groupId === gid && c.serviceDateFrom >= "2025-10-01" && c.serviceDateFrom <= "2025-10-31").map((c) => c.id);
    expect(expected.length).toBeGreaterThan(0);
    expect(listed.map((c) => c.id)).toEqual(expected);
    const mid = all[5]?.memberId as string;
    const mine = await walk(client, "claims", { memberId: mid });
    expect(mine.map((c) => c.id)).toEqual(all.filter((c) => c.memberId === mid).map((c) => c.id));
    const member = await client.getMember(mid);
    expect(member.id).toBe(mid);
    await client.close();
  });

  it("enforces the three keys and answers the error body everywhere", async () => {
    const none = await raw("/v2/members", "");
    expect(none.status).toBe(401);
    expect(ErrorBody.parse(none.body)).toMatchObject({ path: "/v2/members" });
    expect(typeof none.body.timestamp).toBe("string");
    expect((await raw("/v2/members", "wrong-key")).status).toBe(401);
    expect((await raw("/v2/members", sb.keys.readOnly)).status).toBe(200);
    const ro = await raw("/v2/groups", sb.keys.readOnly, "POST");
    expect(ro.status).toBe(403);
    expect(ErrorBody.safeParse(ro.body).success).toBe(true);
    expect((await raw("/v1/claims/medical", sb.keys.noClaims)).status).toBe(403);
    expect((await raw("/v2/members", sb.keys.noClaims)).status).toBe(200);
    const nf = await raw("/v9/nothing");
    expect(nf.status).toBe(404);
    expect(ErrorBody.safeParse(nf.body).success).toBe(true);

    await expect(clientFor(sb, "full", { apiKey: "bad-key-123" }).getMember("x")).rejects.toBeInstanceOf(AuthError);
    const roClient = clientFor(sb, "readOnly");
    await expect(roClient.patchMember([...sb.iterate("members")][0]?.id as string, { phone: "1" })).rejects.toBeInstanceOf(PermissionError);
    await roClient.close();
    const ncClient = clientFor(sb, "noClaims");
    await expect(walk(ncClient, "claims")).rejects.toBeInstanceOf(PermissionError);
    await ncClient.close();
    const client = clientFor(sb);
    await expect(client.getMember("00000000-0000-4000-8000-000000000000")).rejects.toBeInstanceOf(NotFoundError);
    await expect(walk(client, "members", { effectiveDate: "2025-02-30" })).rejects.toBeInstanceOf(ApiError);
    await client.close();
  });

  it("answers control routes without a key and counts API requests in stats()", async () => {
    const info = await raw("/_sandbox/info", "");
    expect(info.status).toBe(200);
    expect(info.body.today).toBe(sb.today);
    const s = sb.stats();
    expect(s.requests).toBeGreaterThan(10);
    expect(s.byStatus["200"]).toBeGreaterThan(0);
    expect(s.byStatus["401"]).toBeGreaterThan(0);
  });
});

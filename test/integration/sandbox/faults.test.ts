import { request } from "undici";
import { afterAll, beforeAll, beforeEach, describe, expect, it } from "vitest";
import { PaginationError, PermissionError, RateLimitError, ServerError, TransportError } from "../../../src/errors.js";
import { startSandbox, type FaultPlan, type Sandbox } from "../../../src/sandbox/index.js";
import { FaultInjector } from "../../../src/sandbox/faults.js";
import { waitUntil } from "../../helpers/wait.js";
import { clientFor, walk } from "./walk-helpers.js";

let sb: Sandbox;
beforeAll(async () => {
  sb = await startSandbox({ seed: 51, members: 800 });
});
afterAll(() => sb.close());
beforeEach(() => sb.setFaults({}));

const noRetry = { retry: { maxAttempts: 1 } } as const;

async function status(path: string): Promise<{ status: number; body: string; headers: Record<string, unknown> }> {
  const res = await request(`${sb.baseUrl}${path}`, { headers: { authorization: `Bearer ${sb.keys.full}` } });
  return { status: res.statusCode, body: await res.body.text(), headers: res.headers };
}

describe("fault plan decisions", () => {
  it("are reproducible for a seed and honour every-N, path prefix and after-N", () => {
    const run = (plan: FaultPlan, paths: string[]) => {
      const f = new FaultInjector(1);
      f.set(plan);
      return paths.map((p) => f.decide(p).action);
    };
    const paths = Array.from({ length: 200 }, (_, i) => (i % 2 ? "/v2/members" : "/v2/groups"));
    const plan: FaultPlan = { seed: 9, http500: 0.2, http429: 0.1 };
    expect(run(plan, paths)).toEqual(run(plan, paths));
    expect(run(plan, paths)).not.toEqual(run({ ...plan, seed: 10 }, paths));
    expect(run({ http503: { every: 3 } }, ["/a", "/a", "/a", "/a", "/a", "/a"])).toEqual(["none", "none", "503", "none", "none", "503"]);
    expect(run({ pathPrefix: "/v2/members", afterRequests: 2, http503: 1 }, ["/v2/members", "/v2/groups", "/v2/members", "/v2/members", "/v2/groups"])).toEqual(["none", "none", "none", "503", "none"]);
  });
});

describe("faults over HTTP", () => {
  it("429 carries Retry-After and a JSON error body; the client waits and succeeds", async () => {
    sb.setFaults({ http429: { every: 2 }, retryAfterSeconds: 1 });
    await status("/v2/designs");
    const r = await status("/v2/designs");
    expect(r.status).toBe(429);
    expect(r.headers["retry-after"]).toBe("1");
    expect(JSON.parse(r.body)).toMatchObject({ message: expect.any(String), path: "/v2/designs" });
    sb.setFaults({ http429: { every: 1 }, retryAfterSeconds: 0 });
    await expect(walk(clientFor(sb, "full", noRetry), "designs")).rejects.toBeInstanceOf(RateLimitError);
  });

  it("500, an HTML 502 and 503 map to the client's typed errors", async () => {
    sb.setFaults({ http500: 1 });
    await expect(walk(clientFor(sb, "full", noRetry), "designs")).rejects.toBeInstanceOf(ServerError);
    sb.setFaults({ http502: 1 });
    const r = await status("/v2/designs");
    expect(r.status).toBe(502);
    expect(r.body).toMatch(/<html>/);
    await expect(walk(clientFor(sb, "full", noRetry), "designs")).rejects.toMatchObject({ name: "ServerError", status: 502 });
    sb.setFaults({ http503: 1 });
    await expect(walk(clientFor(sb, "full", noRetry), "designs")).rejects.toMatchObject({ status: 503 });
  });

  it("a 403, and with htmlErrors an HTML page in place of the JSON error body, whose status still decides", async () => {
    sb.setFaults({ http403: 1 });
    expect(await status("/v2/designs")).toMatchObject({ status: 403, body: expect.stringContaining('"message":"Forbidden"') });
    sb.setFaults({ http403: 1, htmlErrors: true });
    const r = await status("/v2/designs");
    expect(r.status).toBe(403);
    expect(r.body).toMatch(/^<!DOCTYPE html>[\s\S]*403 Forbidden/);
    await expect(walk(clientFor(sb, "full", noRetry), "designs")).rejects.toBeInstanceOf(PermissionError);
    sb.setFaults({ http400: 1, htmlErrors: true, errorMessage: "Bad <Request>" });
    expect(await status("/v2/designs")).toMatchObject({ status: 400, body: expect.stringContaining("400 Bad &#60;Request&#62;") });
  });

  it("transient faults are retried by the client and the walk is still complete", async () => {
    sb.setFaults({ seed: 3, http503: 0.2, http429: 0.1, retryAfterSeconds: 0, reset: 0.05 });
    const items = await walk(clientFor(sb, "full", { retry: { maxAttempts: 8, baseMs: 1, capMs: 5 } }), "members");
    expect(items.map((m) => m.id)).toEqual([...sb.iterate("members")].map((m) => m.id));
    const s = sb.stats();
    expect((s.byStatus["503"] ?? 0) + (s.byStatus["429"] ?? 0)).toBeGreaterThan(0);
  });

  it("a reset connection and a hanging response are transport errors", async () => {
    sb.setFaults({ reset: 1 });
    await expect(walk(clientFor(sb, "full", noRetry), "designs")).rejects.toBeInstanceOf(TransportError);
    sb.setFaults({ hang: 1 });
    // Ended by the headers deadline (how soon after it: test/integration/api/deadlines.test.ts).
    const hung = walk(clientFor(sb, "full", { ...noRetry, deadlines: { headersMs: 300 } }), "designs");
    await expect(hung).rejects.toBeInstanceOf(TransportError);
    await expect(hung).rejects.toMatchObject({ causeCode: "UND_ERR_HEADERS_TIMEOUT" });
  });

  // A lower bound on time is the feature here: load can only make the answer later.
  it("added latency delays every answer", async () => {
    sb.setFaults({ latencyMs: 120 });
    const t0 = performance.now();
    expect((await status("/v2/designs")).status).toBe(200);
    expect(performance.now() - t0).toBeGreaterThanOrEqual(115);
  });

  it("latency is an answer's whole time: the answer is made when the request arrives and leaves that long after", async () => {
    // A twin with the same seed tells which member the next simulated day will change.
    const twin = await startSandbox({ seed: 51, members: 800 });
    const id = (await twin.advance()).changes.members.updated[0]!;
    await twin.close();
    expect(id).toBeDefined();
    const before = (await status(`/v1/members/${id}`)).body;
    sb.setFaults({ latencyMs: 400 });
    const t0 = performance.now();
    const arrivals = sb.stats().requests;
    const held = status(`/v1/members/${id}`);
    await waitUntil("the request's arrival at the sandbox", () => sb.stats().requests > arrivals);
    await sb.advance(); // after it arrived, while its answer is held
    const answer = await held;
    expect(performance.now() - t0).toBeGreaterThanOrEqual(395);
    // Made at arrival: the day that passed while it was held is not in it.
    expect(answer.body).toBe(before);
    sb.setFaults({});
    expect((await status(`/v1/members/${id}`)).body).not.toBe(before);
  });

  it("a stuck cursor repeats the same page forever; the client stops with a PaginationError", async () => {
    sb.setFaults({ stuckCursorOn: "members" });
    const first = JSON.parse((await status("/v2/members")).body) as { data: { id: string }[] };
    const last = first.data[first.data.length - 1]?.id as string;
    const again = JSON.parse((await status(`/v2/members?startAfter=${last}`)).body) as { data: { id: string }[] };
    expect(again.data.map((m) => m.id)).toEqual(first.data.map((m) => m.id));
    await expect(walk(clientFor(sb), "members")).rejects.toBeInstanceOf(PaginationError);
  });

  it("serves another page size on demand and still lets a walk complete", async () => {
    sb.setFaults({ pageSizeOverride: 37 });
    const r = JSON.parse((await status("/v2/members")).body) as { data: unknown[] };
    expect(r.data).toHaveLength(37);
    const items = await walk(clientFor(sb), "members");
    expect(items).toHaveLength([...sb.iterate("members")].length);
  });

  it("drops ids from some items without breaking the cursor", async () => {
    sb.setFaults({ itemWithoutIdEvery: 10 });
    const items = await walk(clientFor(sb), "members");
    const truth = [...sb.iterate("members")];
    const missing = items.filter((m) => m.id === undefined);
    expect(missing.length).toBeGreaterThan(truth.length / 30);
    expect(items).toHaveLength(truth.length);
    expect(items.filter((m) => m.id !== undefined).map((m) => m.id)).toEqual(truth.map((m) => m.id).filter((id) => items.some((x) => x.id === id)));
  });

  it("an outage after N requests fails a walk mid-way; control routes stay reachable", async () => {
    sb.setFaults({ pathPrefix: "/v2/members", afterRequests: 3, http503: 1 });
    const client = clientFor(sb, "full", { retry: { maxAttempts: 2, baseMs: 1, capMs: 2 } });
    let pages = 0;
    await expect(
      (async () => {
        for await (const _ of client.pages("members")) pages++;
      })(),
    ).rejects.toBeInstanceOf(ServerError);
    expect(pages).toBe(3);
    expect((await status("/v2/groups")).status).toBe(200);
    const ctl = await request(`${sb.baseUrl}/_sandbox/faults`, { method: "POST", body: JSON.stringify({ http500: 1, pathPrefix: "/v1" }) });
    expect(ctl.statusCode).toBe(200);
    await ctl.body.dump();
    const got = await request(`${sb.baseUrl}/_sandbox/faults`);
    expect(await got.body.json()).toEqual({ http500: 1, pathPrefix: "/v1" });
    const bad = await request(`${sb.baseUrl}/_sandbox/faults`, { method: "POST", body: JSON.stringify({ http500: 7 }) });
    expect(bad.statusCode).toBe(400);
    await bad.body.dump();
  });

  it("omitHasMore makes the end of a list an empty page", async () => {
    sb.setFaults({ omitHasMore: true });
    const r = JSON.parse((await status("/v2/designs")).body) as Record<string, unknown>;
    expect("hasMore" in r).toBe(false);
    expect(await walk(clientFor(sb), "designs")).toHaveLength([...sb.iterate("designs")].length);
  });
});

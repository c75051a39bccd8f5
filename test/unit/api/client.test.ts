import { MockAgent } from "undici";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { createClient } from "../../../src/api/client.js";
import { ConfigError, ResponseShapeError } from "../../../src/errors.js";

const ORIGIN = "http://svc.test";
const KEY = "unit-key-7f3c9a1e5b";

interface Seen {
  method: string;
  path: string;
  headers: Record<string, string>;
  body: unknown;
}

let agent: MockAgent;
let seen: Seen[];

beforeEach(() => {
  agent = new MockAgent();
  agent.disableNetConnect();
  seen = [];
});
afterEach(async () => {
  await agent.close();
});

/** Intercept one request and answer it; records what the client sent. */
function on(method: string, path: string | ((p: string) => boolean), status: number, data: unknown) {
  agent
    .get(ORIGIN)
    .intercept({ method, path })
    .reply((opts) => {
      seen.push({
        method: opts.method,
        path: opts.path,
        headers: Object.fromEntries(Object.entries((opts.headers ?? {}) as Record<string, string>).map(([k, v]) => [k.toLowerCase(), v])),
        body: typeof opts.body === "string" ? JSON.parse(opts.body) : undefined,
      });
      return { statusCode: status, data: JSON.stringify(data), responseOptions: { headers: { "content-type": "application/json" } } };
    });
}

const client = (extra: Parameters<typeof createClient>[0] extends infer O ? Partial<O> : never = {}) =>
  createClient({ baseUrl: ORIGIN, apiKey: KEY, dispatcher: agent, retry: { maxAttempts: 1 }, ...extra });

const member = { id: "m 1/x", firstName: "A", coverages: [{ id: "c1", status: "active" }] };
const enrollee = { firstName: "A", lastName: "B", dateOfBirth: "2000-02-29", ssn: "123-45-6789", memberType: "employee" };

describe("client endpoints (MockAgent)", () => {
  it("sends every endpoint at its version prefix, with the bearer key and encoded path parameters", async () => {
    const c = client();
    on("GET", "/v2/designs", 200, { data: [{ id: "d1" }], hasMore: false });
    on("GET", "/v2/groups", 200, { data: [{ id: "g1", plans: [{ id: "p1" }] }], hasMore: false });
    on("POST", "/v2/groups", 201, { id: "g2" });
    on("POST", "/v2/groups/g%2F1/enroll/initial-enrollment", 200, { enrolled: 1, members: [member] });
    on("POST", "/v3/groups/g1/enroll/add-subscriber", 202, { enrollmentRequestId: "er1" });
    on("GET", "/v1/enrollmentRequests/er1", 200, { id: "er1", status: "succeeded" });
    on("POST", "/v3/groups/g1/enroll/sc%201/add-dependent", 202, { enrollmentRequestId: "er2" });
    on("POST", "/v3/groups/g1/enroll/terminate", 200, { id: "c1", status: "terminated", endDate: "2025-01-31" });
    on("GET", "/v2/members?status=active&groupId=g1", 200, { data: [member], hasMore: false });
    on("GET", "/v1/members/m%201%2Fx", 200, member);
    on("PATCH", "/v2/members/m%201%2Fx", 200, { ...member, lastName: "C" });
    on("GET", "/v1/claims/medical?memberId=m1", 200, { data: [{ id: "cl1", claimAmount: "10.00" }], hasMore: false });
    on("GET", "/v2/designs/..%2Fx", 200, { ok: true });

    const designs = [];
    for await (const d of c.listDesigns()) designs.push(d);
    expect(designs).toEqual([{ id: "d1" }]);
    const groups = [];
    for await (const g of c.listGroups()) groups.push(g);
    expect(groups[0]?.plans?.[0]?.id).toBe("p1");
    const group = {
      groupId: "G-1",
      adminEmail: "a@b.test",
      sponsorName: "S",
      ein: "12-3456789",
      planDesignId: "d1",
      benefitBundleId: "b1",
      vendorId: "v1",
      effectiveDate: "2025-01-01",
      terminationDate: "2025-12-31",
    };
    expect((await c.createGroup(group)).groupPolicyId).toBe("g2");
    expect((await c.initialEnrollment("g/1", { members: [{ ...enrollee, memberId: "m1" }] })).enrolled).toBe(1);
    expect((await c.addSubscriber("g1", { subscribers: [{ plan: "p1", self: enrollee }] })).enrollmentRequestId).toBe("er1");
    expect((await c.getEnrollmentRequest("er1")).status).toBe("succeeded");
    expect((await c.addDependent("g1", "sc 1", { plan: "p1", dependent: enrollee })).enrollmentRequestId).toBe("er2");
    expect((await c.terminate("g1", { memberId: "m1", terminationDate: "2025-01-31" })).coverage?.status).toBe("terminated");
    const members = [];
    for await (const m of c.listMembers({ status: "active", groupId: "g1" })) members.push(m);
    expect(members).toHaveLength(1);
    expect((await c.getMember("m 1/x")).id).toBe("m 1/x");
    expect((await c.patchMember("m 1/x", { lastName: "C" })).member?.lastName).toBe("C");
    const claims = [];
    for await (const cl of c.listMedicalClaims({ memberId: "m1" })) claims.push(cl);
    expect(claims[0]?.claimAmount).toBe("10.00");
    expect(await c.getJson("/v2/designs/..%2Fx")).toEqual({ ok: true });

    agent.assertNoPendingInterceptors();
    expect(seen).toHaveLength(13);
    for (const s of seen) {
      expect(s.headers.authorization).toBe(`Bearer ${KEY}`);
      expect(s.headers.accept).toBe("application/json");
    }
    const post = seen.find((s) => s.path === "/v3/groups/g1/enroll/add-subscriber");
    expect(post?.headers["content-type"]).toBe("application/json");
    expect(post?.body).toEqual({ subscribers: [{ plan: "p1", self: enrollee }] });
    expect(seen.find((s) => s.method === "PATCH")?.body).toEqual({ lastName: "C" });
    expect(c.stats.requests).toBe(13);
    await c.close(); // an injected dispatcher stays open
    on("GET", "/v2/designs", 200, []);
    expect(await c.getJson("/v2/designs")).toEqual([]);
  });

  it("escapes . and .. path parameters and refuses empty ones", async () => {
    const c = client();
    on("GET", "/v1/members/%2E%2E", 200, { id: ".." });
    expect((await c.getMember("..")).id).toBe("..");
    await expect(c.getMember("")).rejects.toThrow(/memberId must be a non-empty string/);
    expect(() => c.getJson("v2/designs")).toThrow(/must start with/);
  });

  it("sends the configured claim date parameter names and page sizes as limit", async () => {
    const c = client({ claimDateParams: { from: "dateOfServiceStart", to: "dateOfServiceEnd" }, pageSize: { default: 25, members: 100 } });
    on("GET", (p) => p.startsWith("/v1/claims/medical"), 200, { data: [] });
    on("GET", (p) => p.startsWith("/v2/members"), 200, { data: [] });
    for await (const _ of c.listMedicalClaims({ serviceDateFrom: "2025-01-01", serviceDateTo: "2025-01-31", groupId: "g1" })) void _;
    for await (const _ of c.pages("members", { planId: "p1" })) void _;
    const claimsUrl = new URL(seen[0]!.path, ORIGIN);
    expect(Object.fromEntries(claimsUrl.searchParams)).toEqual({
      limit: "25",
      dateOfServiceStart: "2025-01-01",
      dateOfServiceEnd: "2025-01-31",
      groupId: "g1",
    });
    expect(Object.fromEntries(new URL(seen[1]!.path, ORIGIN).searchParams)).toEqual({ limit: "100", planId: "p1" });
  });

  it("walks raw pages with a configured id field and sends startAfter", async () => {
    const c = client({ idFields: { members: "memberId" } });
    on("GET", "/v2/members", 200, { items: [{ memberId: "a" }, { memberId: "b" }] });
    on("GET", "/v2/members?startAfter=b", 200, { results: [{ memberId: "c" }] });
    on("GET", "/v2/members?startAfter=c", 200, []);
    const pages = [];
    for await (const p of c.pages("members")) pages.push(p);
    expect(pages.map((p) => p.items.length)).toEqual([2, 1]);
    agent.assertNoPendingInterceptors();
  });

  it("throws a ResponseShapeError on an invalid item in a typed walk, but pages() passes it through", async () => {
    const c = client();
    on("GET", "/v2/members", 200, { data: [{ id: "m1" }, { id: 5, ssn: "987654321" }], hasMore: false });
    on("GET", "/v2/members", 200, { data: [{ id: "m1" }, { id: 5, ssn: "987654321" }], hasMore: false });
    const typed = async () => {
      for await (const _ of c.listMembers()) void _;
    };
    await expect(typed()).rejects.toThrow(ResponseShapeError);
    const raw = [];
    for await (const p of c.pages("members")) raw.push(...p.items);
    expect(raw).toHaveLength(2);
  });

  it("rejects a list answer of the wrong shape, naming the endpoint", async () => {
    const c = client();
    on("GET", "/v2/groups", 200, { groups: [] });
    const walk = async () => {
      for await (const _ of c.listGroups()) void _;
    };
    await expect(walk()).rejects.toThrow(/^GET \/v2\/groups: expected a list/);
  });
});

describe("client options", () => {
  it("reports every bad option in one ConfigError, without the key", () => {
    const err = (() => {
      try {
        createClient({ baseUrl: "nope", apiKey: "", concurrency: 0, retry: { maxAttempts: 0 }, deadlines: { headersMs: -1 } });
      } catch (e) {
        return e as ConfigError;
      }
    })();
    expect(err).toBeInstanceOf(ConfigError);
    expect(err?.problems.map((p) => p.split(":")[0])).toEqual(["baseUrl", "apiKey", "concurrency", "deadlines.headersMs", "retry.maxAttempts"]);
    const withKey = (() => {
      try {
        createClient({ baseUrl: `https://${KEY}@x.test`, apiKey: KEY, requestsPerSecond: -1 });
      } catch (e) {
        return e as ConfigError;
      }
    })();
    expect(withKey?.problems).toHaveLength(2);
    expect(`${withKey?.message} ${withKey?.stack} ${JSON.stringify(withKey)}`).not.toContain(KEY);
  });
  it("keeps a path prefix of the base URL", async () => {
    const c = createClient({ baseUrl: `${ORIGIN}/api/`, apiKey: KEY, dispatcher: agent });
    on("GET", "/api/v2/designs", 200, []);
    expect(await c.getJson("/v2/designs")).toEqual([]);
    expect(c.baseUrl).toBe(`${ORIGIN}/api`);
  });
});

/**
 * A JSON error answer (400, 409, 500...) from an endpoint that carries people is described, never
 * quoted: its `message` may name the person the request was about. The error gives the status, the
 * path (query values that could identify a person withheld), the number of `errors` entries and
 * their field paths. Other endpoints still quote the message, redacted.
 */
import { MockAgent } from "undici";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { createClient, type ServiceClient } from "../../../src/api/client.js";
import { errorFromResponse } from "../../../src/api/response-errors.js";
import { ApiError, BenefitsSyncError } from "../../../src/errors.js";

const ORIGIN = "http://svc.test";
const MESSAGE = "Email jane.roe@example.com is already taken by member Jane Roe born 1980-02-03";
const PHI = ["Jane", "Roe", "1980-02-03", "jane.roe@example.com", "already taken"];
const ISSUES = [
  { path: ["email"], message: "jane.roe@example.com is taken by Jane Roe", code: "custom" },
  { path: ["dependents", 0, "dateOfBirth"], message: "1980-02-03 is after Jane Roe's", code: "custom" },
];
const BODY = JSON.stringify({ timestamp: "2026-01-01T00:00:00Z", path: "/x", message: MESSAGE, errors: ISSUES });

let agent: MockAgent;
beforeEach(() => {
  agent = new MockAgent();
  agent.disableNetConnect();
});
afterEach(async () => {
  await agent.close();
});

function answer(method: string, path: string, status: number, text: string) {
  agent
    .get(ORIGIN)
    .intercept({ method, path: (p) => p.split("?")[0] === path })
    .reply(status, text, { headers: { "content-type": "application/json" } })
    .persist();
}

const client = () => createClient({ baseUrl: ORIGIN, apiKey: "people-unit-key-77bb", dispatcher: agent, retry: { maxAttempts: 1 } });

async function failure(fn: () => Promise<unknown>): Promise<BenefitsSyncError> {
  try {
    await fn();
  } catch (err) {
    expect(err).toBeInstanceOf(BenefitsSyncError);
    return err as BenefitsSyncError;
  }
  throw new Error("expected a failure");
}

async function drain<T>(it: AsyncIterable<T>) {
  for await (const _ of it) void _;
}

function expectDescribed(err: BenefitsSyncError, status: number, path: string) {
  expect(err).toBeInstanceOf(ApiError);
  for (const text of [err.message, JSON.stringify(err), String(err.stack)]) for (const p of PHI) expect(text).not.toContain(p);
  expect(err.message).toContain(`answered ${status}`);
  expect(err.message).toContain(path);
  expect(err.message).toContain("2 errors entries");
  expect(err.message).toContain("email");
  expect(err.message).toContain("dependents.0.dateOfBirth");
  expect((err as ApiError).issues.map((i) => i.path)).toEqual([["email"], ["dependents", 0, "dateOfBirth"]]);
}

const enrollee = { firstName: "A", lastName: "B", dateOfBirth: "2000-01-01", ssn: "111-22-3333", memberType: "employee" };
type Call = [string, string, string, (c: ServiceClient) => Promise<unknown>];
const peopleCalls: Call[] = [
  ["members list (the sync's path)", "GET", "/v2/members", (c) => drain(c.rawPages("members"))],
  ["members list (typed)", "GET", "/v2/members", (c) => drain(c.listMembers())],
  ["one member", "GET", "/v1/members/m1", (c) => c.getMember("m1")],
  ["patch member", "PATCH", "/v2/members/m1", (c) => c.patchMember("m1", { lastName: "C" })],
  ["claims", "GET", "/v1/claims/medical", (c) => drain(c.rawPages("claims"))],
  ["add subscriber", "POST", "/v3/groups/g1/enroll/add-subscriber", (c) => c.addSubscriber("g1", enrollee as never)],
  ["enrollment request", "GET", "/v1/enrollmentRequests/er1", (c) => c.getEnrollmentRequest("er1")],
];

describe("a JSON error answer from an endpoint that carries people is described, never quoted", () => {
  it.each(peopleCalls.flatMap(([what, ...rest]) => [400, 500].map((status) => [what, status, ...rest] as const)))(
    "%s: a %i",
    async (_, status, method, path, call) => {
      answer(method, path, status, BODY);
      expectDescribed(await failure(() => call(client())), status, path);
    },
  );

  it("a body that is not the documented shape is described too", () => {
    const err = errorFromResponse({ status: 409, method: "PATCH", path: "/v2/members/m1", text: JSON.stringify({ error: MESSAGE }) });
    for (const p of PHI) expect(JSON.stringify(err) + err.message).not.toContain(p);
    expect(err.message).toContain("PATCH /v2/members/m1 answered 409");
  });

  it("query values that could identify a person are withheld from the path; the walk's own are kept", async () => {
    answer("GET", "/v2/members", 400, BODY);
    const err = await failure(() => client().getJson("/v2/members", { groupId: "G-7", lastName: "Roe", dateOfBirth: "1980-02-03", limit: "5" }));
    expectDescribed(err, 400, "/v2/members?");
    expect(err.message).toContain("groupId=G-7");
    expect(err.message).toContain("limit=5");
    expect(err.message).toContain("lastName=");
    expect((err as ApiError).path).not.toContain("Roe");
  });
});

describe("other endpoints still quote the server's message, redacted", () => {
  it("a 400 from /v2/groups quotes its message and its issues", async () => {
    answer("POST", "/v2/groups", 400, JSON.stringify({ message: "Plan design pd-9 is retired; call 123-45-6789", errors: [{ path: ["planDesignId"], message: "retired", code: "custom" }] }));
    const err = await failure(() => client().createGroup({} as never));
    expect(err.message).toContain("Plan design pd-9 is retired");
    expect(err.message).toContain("planDesignId: retired");
    expect(err.message).not.toContain("123-45-6789");
  });
});

/**
 * The spec shows no answer body for terminate, add-dependent and update-member, and names only what
 * create group, add-subscriber and a poll carry. A write the service accepted must never look failed
 * because its body was not the shape we guessed (the caller might send it again), so every plausible
 * shape is read, and what came is recorded (status and shape, never values).
 */
import { MockAgent } from "undici";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { createClient } from "../../../src/api/client.js";
import type { Logger } from "../../../src/api/logger.js";

const ORIGIN = "http://svc.test";
const KEY = "unit-key-write-answers-41c9";

let agent: MockAgent;
let logged: { msg: string; fields: Record<string, unknown> | undefined }[];

beforeEach(() => {
  agent = new MockAgent();
  agent.disableNetConnect();
  logged = [];
});
afterEach(async () => {
  agent.assertNoPendingInterceptors();
  await agent.close();
});

/** Answer one request with `status` and `body` (a string is sent as is: "" is an empty body). */
function on(method: string, path: string, status: number, body: unknown) {
  agent
    .get(ORIGIN)
    .intercept({ method, path })
    .reply(status, typeof body === "string" ? body : JSON.stringify(body), { headers: { "content-type": "application/json" } });
}

const logger: Logger = {
  debug: (msg, fields) => void logged.push({ msg, fields }),
  info: () => undefined,
  warn: () => undefined,
};
const client = () => createClient({ baseUrl: ORIGIN, apiKey: KEY, dispatcher: agent, retry: { maxAttempts: 1 }, logger, sleep: async () => undefined });

const group = {
  groupId: "G-1",
  adminEmail: "a@b.test",
  sponsorName: "S",
  ein: "12-3456789",
  planDesignId: "d1",
  benefitBundleId: "b1",
  vendorId: "v1",
  effectiveDate: "2026-01-01",
  terminationDate: "2026-12-31",
};
const enrollee = { firstName: "A", lastName: "B", dateOfBirth: "2000-02-29", ssn: "123-45-6789", memberType: "employee" };
const subscribers = { subscribers: [{ plan: "p1", self: enrollee }] };
const member = { id: "m1", firstName: "A", lastName: "C", coverages: [{ id: "c1", status: "terminated", endDate: "2026-01-31" }, { id: "c0", status: "active" }] };

describe("create group answers", () => {
  it("reads the group, {groupPolicyId}, {data: group} and an empty 201 without failing", async () => {
    const c = client();
    on("POST", "/v2/groups", 201, { id: "gp1", groupId: "G-1", plans: [{ id: "p1" }] });
    const full = await c.createGroup(group);
    expect(full.groupPolicyId).toBe("gp1");
    expect(full.group?.plans?.[0]?.id).toBe("p1");
    expect(full.answer).toEqual({ status: 201, shape: "{id: string, groupId: string, plans: array(1)}" });

    on("POST", "/v2/groups", 201, { groupPolicyId: "gp2" });
    const idOnly = await c.createGroup(group);
    expect(idOnly.groupPolicyId).toBe("gp2");
    expect(idOnly.answer).toEqual({ status: 201, shape: "{groupPolicyId: string}" });

    on("POST", "/v2/groups", 200, { data: { id: "gp3", groupId: "G-1" } });
    expect((await c.createGroup(group)).groupPolicyId).toBe("gp3");

    on("POST", "/v2/groups", 201, "");
    const empty = await c.createGroup(group);
    expect(empty.groupPolicyId).toBeUndefined();
    expect(empty.group).toBeUndefined();
    expect(empty.answer).toEqual({ status: 201, shape: "empty" });
  });
});

describe("add-subscriber and add-dependent answers", () => {
  it("reads {enrollmentRequestId}, {id}, the whole request and {enrollmentRequest: {...}}", async () => {
    const c = client();
    on("POST", "/v3/groups/g1/enroll/add-subscriber", 202, { enrollmentRequestId: "er1" });
    expect((await c.addSubscriber("g1", subscribers)).enrollmentRequestId).toBe("er1");

    on("POST", "/v3/groups/g1/enroll/add-subscriber", 202, { id: "er2" });
    const byId = await c.addSubscriber("g1", subscribers);
    expect(byId.enrollmentRequestId).toBe("er2");
    expect(byId.answer).toEqual({ status: 202, shape: "{id: string}" });

    on("POST", "/v3/groups/g1/enroll/add-subscriber", 201, { id: "er3", status: "PENDING", createdAt: "2026-01-01T00:00:00Z", errors: [] });
    const whole = await c.addSubscriber("g1", subscribers);
    expect(whole.enrollmentRequestId).toBe("er3");
    expect(whole.request?.status).toBe("pending");

    on("POST", "/v3/groups/g1/enroll/sc1/add-dependent", 200, { enrollmentRequest: { id: "er4", status: "queued" } });
    const dep = await c.addDependent("g1", "sc1", { plan: "p1", dependent: enrollee });
    expect(dep.enrollmentRequestId).toBe("er4");
    expect(dep.request?.status).toBe("pending");
  });

  it("an accepted write whose answer names no request still resolves, saying so", async () => {
    const c = client();
    on("POST", "/v3/groups/g1/enroll/sc1/add-dependent", 204, "");
    const dep = await c.addDependent("g1", "sc1", { plan: "p1", dependent: enrollee });
    expect(dep.enrollmentRequestId).toBeUndefined();
    expect(dep.answer).toEqual({ status: 204, shape: "empty" });
  });
});

describe("terminate answers", () => {
  it("reads 204, the coverage, {coverage}, the member and an enrollment request", async () => {
    const c = client();
    const body = { memberId: "m1", coverageId: "c1", terminationDate: "2026-01-31" };
    on("POST", "/v3/groups/g1/enroll/terminate", 204, "");
    const none = await c.terminate("g1", body);
    expect(none.coverage).toBeUndefined();
    expect(none.answer).toEqual({ status: 204, shape: "empty" });

    on("POST", "/v3/groups/g1/enroll/terminate", 200, { id: "c1", status: "terminated", endDate: "2026-01-31" });
    expect((await c.terminate("g1", body)).coverage?.endDate).toBe("2026-01-31");

    on("POST", "/v3/groups/g1/enroll/terminate", 200, { coverage: { id: "c1", status: "terminated" } });
    expect((await c.terminate("g1", body)).coverage?.status).toBe("terminated");

    on("POST", "/v3/groups/g1/enroll/terminate", 200, member);
    const fromMember = await c.terminate("g1", body);
    expect(fromMember.coverage?.id).toBe("c1");
    expect(fromMember.member?.id).toBe("m1");

    on("POST", "/v3/groups/g1/enroll/terminate", 202, { enrollmentRequestId: "er9" });
    const queued = await c.terminate("g1", body);
    expect(queued.enrollmentRequestId).toBe("er9");
    expect(queued.coverage).toBeUndefined();
  });
});

describe("update-member and initial-enrollment answers", () => {
  it("reads the member, {data: member}, an empty 204 and {message}", async () => {
    const c = client();
    on("PATCH", "/v2/members/m1", 200, member);
    expect((await c.patchMember("m1", { lastName: "C" })).member?.lastName).toBe("C");
    on("PATCH", "/v2/members/m1", 200, { data: member });
    expect((await c.patchMember("m1", { lastName: "C" })).member?.id).toBe("m1");
    on("PATCH", "/v2/members/m1", 204, "");
    const empty = await c.patchMember("m1", { lastName: "C" });
    expect(empty.member).toBeUndefined();
    expect(empty.answer.status).toBe(204);
    on("PATCH", "/v2/members/m1", 200, { message: "updated" });
    const said = await c.patchMember("m1", { lastName: "C" });
    expect(said.member).toBeUndefined();
    expect(said.answer.shape).toBe("{message: string}");
  });

  it("reads {enrolled, members}, a bare list of members and an empty answer", async () => {
    const c = client();
    const body = { members: [{ ...enrollee, memberId: "x1" }] };
    on("POST", "/v2/groups/g1/enroll/initial-enrollment", 200, { enrolled: 1, members: [member] });
    expect((await c.initialEnrollment("g1", body)).enrolled).toBe(1);
    on("POST", "/v2/groups/g1/enroll/initial-enrollment", 201, [member]);
    const bare = await c.initialEnrollment("g1", body);
    expect(bare.members?.map((m) => m.id)).toEqual(["m1"]);
    expect(bare.enrolled).toBe(1);
    on("POST", "/v2/groups/g1/enroll/initial-enrollment", 204, "");
    const empty = await c.initialEnrollment("g1", body);
    expect(empty.members).toBeUndefined();
    expect(empty.enrolled).toBeUndefined();
  });
});

describe("enrollment request polls", () => {
  it("maps COMPLETED, SUCCESS, ERROR and IN_PROGRESS to the documented statuses and keeps the raw one", async () => {
    const c = client();
    const cases: [string, string][] = [
      ["COMPLETED", "succeeded"],
      ["Success", "succeeded"],
      ["ERROR", "failed"],
      ["rejected", "failed"],
      ["IN_PROGRESS", "processing"],
      ["queued", "pending"],
      ["Approved", "succeeded"],
      ["COMPLETED_WITH_ERRORS", "failed"],
      ["partially-failed", "failed"],
    ];
    for (const [raw, status] of cases) {
      on("GET", "/v1/enrollmentRequests/er1", 200, { id: "er1", status: raw });
      const r = await c.getEnrollmentRequest("er1");
      expect([r.status, r.rawStatus]).toEqual([status, raw]);
    }
  });

  it("waits through IN_PROGRESS and settles on COMPLETED; an answer without id or with a wrapped body is read", async () => {
    const c = client();
    on("GET", "/v1/enrollmentRequests/er1", 200, { data: { status: "IN_PROGRESS" } });
    on("GET", "/v1/enrollmentRequests/er1", 200, { state: "COMPLETED", errors: null });
    const done = await c.waitForEnrollmentRequest("er1", { timeoutMs: 60_000 });
    expect(done.status).toBe("succeeded");
    expect(done.id).toBe("er1");
    expect(done.rawStatus).toBe("COMPLETED");
  });

  it("an unknown status is not taken as settled: polling goes on past it", async () => {
    const c = client();
    on("GET", "/v1/enrollmentRequests/er1", 200, { id: "er1", status: "ON_HOLD" });
    on("GET", "/v1/enrollmentRequests/er1", 200, { id: "er1", status: "Done" });
    const done = await c.waitForEnrollmentRequest("er1", { timeoutMs: 60_000 });
    expect([done.status, done.rawStatus]).toEqual(["succeeded", "Done"]);
  });
});

describe("what came is recorded", () => {
  it("logs each write's status and shape, never a value", async () => {
    const c = client();
    on("POST", "/v3/groups/g1/enroll/add-subscriber", 202, { id: "er2", note: "123-45-6789" });
    await c.addSubscriber("g1", subscribers);
    const line = logged.find((l) => l.msg === "write answer");
    expect(line?.fields).toMatchObject({ method: "POST", path: "/v3/groups/g1/enroll/add-subscriber", status: 202, shape: "{id: string, note: string}" });
    expect(JSON.stringify(logged)).not.toContain("123-45-6789");
    expect(JSON.stringify(logged)).not.toContain("er2");
  });
});

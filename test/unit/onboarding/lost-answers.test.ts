/**
 * A write whose answer was lost (the connection reset after the request left) may have been
 * applied, so it is never sent again blindly: the listing is looked at first, and what it shows
 * decides. Counted here by the requests the service saw (MockAgent), not by what our code says.
 */
import { beforeEach, describe, expect, it } from "vitest";
import { createClient } from "../../../src/api/client.js";
import { enrollHouseholds } from "../../../src/eligibility/enroll-subscribers.js";
import { OutcomeUnknownError } from "../../../src/errors.js";
import { createGroupOnce } from "../../../src/onboarding/create-group.js";
import { enrollInitialMembers } from "../../../src/onboarding/initial-enrollment.js";
import { mockService } from "../../helpers/mock-service.js";

const ORIGIN = "http://svc.test";
const svc = mockService(ORIGIN);
const hits = svc.hits;
const reply = svc.reply;
/** The request reaches the service, and the connection resets before its answer. */
function reset(method: string, path: string) {
  svc.agent.get(ORIGIN).intercept({ method, path }).replyWithError(Object.assign(new Error("other side closed"), { code: "ECONNRESET" }));
}
/** Every request the client hands to the dispatcher, before MockAgent answers it. */
const counting = () => svc.counting();
const client = () => createClient({ baseUrl: ORIGIN, apiKey: "unit-key-lost-66", dispatcher: counting(), retry: { maxAttempts: 3 }, sleep: async () => undefined });

const body = {
  groupId: "G-9",
  adminEmail: "hr@nine.example",
  sponsorName: "Nine",
  ein: "12-3456789",
  planDesignId: "pd1",
  benefitBundleId: "bb1",
  vendorId: "v1",
  effectiveDate: "2026-01-01",
  terminationDate: "2026-12-31",
};
const listedGroup = { id: "gp9", groupId: "G-9", adminEmail: "hr@nine.example", effectiveDate: "2026-01-01", terminationDate: "2026-12-31", plans: [{ id: "pl9", basePlanDesignId: "pd1" }] };

describe("a create whose answer was lost", () => {
  it("is looked for in the listing, found there, and not sent again", async () => {
    reply("GET", "/v2/groups", 200, { data: [], hasMore: false });
    reset("POST", "/v2/groups");
    reply("GET", "/v2/groups", 200, { data: [listedGroup], hasMore: false });
    const g = await createGroupOnce(client(), body);
    expect(g).toEqual({ groupPolicyId: "gp9", groupId: "G-9", planId: "pl9", how: "created", answer: "lost" });
    expect(hits.filter((h) => h === "POST /v2/groups")).toHaveLength(1);
  });

  it("not found in the listing: OutcomeUnknownError, and still sent only once", async () => {
    reply("GET", "/v2/groups", 200, { data: [], hasMore: false });
    reset("POST", "/v2/groups");
    reply("GET", "/v2/groups", 200, { data: [], hasMore: false });
    const err = await createGroupOnce(client(), body).catch((e: unknown) => e);
    expect(err).toBeInstanceOf(OutcomeUnknownError);
    expect((err as Error).message).toMatch(/was lost .*ECONNRESET.* it was not sent again/);
    expect(hits.filter((h) => h === "POST /v2/groups")).toHaveLength(1);
  });

  it("a group the listing already has (an earlier run's) is not created again", async () => {
    reply("GET", "/v2/groups", 200, { data: [listedGroup], hasMore: false });
    expect((await createGroupOnce(client(), body)).how).toBe("found");
    expect(hits).toEqual(["GET /v2/groups"]);
  });
});

describe("an add-subscriber whose answer was lost", () => {
  const target = { groupPolicyId: "gp9", groupId: "G-9", planId: "pl9" };
  const self = (firstName: string) => ({ firstName, lastName: "Lost", dateOfBirth: "1980-01-01", ssn: "123-45-6789", memberType: "employee" });
  const listed = (firstName: string) => ({ id: `m-${firstName}`, firstName, lastName: "Lost", dateOfBirth: "1980-01-01", relationship: "self" });

  it("is decided by the member listing: there is enrolled, missing is unknown, nothing is sent twice", async () => {
    reply("GET", "/v2/members", 200, { data: [listed("Old")], hasMore: false });
    reset("POST", "/v3/groups/gp9/enroll/add-subscriber");
    reply("GET", "/v2/members", 200, { data: [listed("Old"), listed("Amy")], hasMore: false });
    const out = await enrollHouseholds(client(), target, [{ self: self("Old") }, { self: self("Amy") }, { self: self("Ben") }]);
    expect(out.map((o) => [o.index, o.status])).toEqual([
      [0, "already"],
      [1, "enrolled"],
      [2, "unknown"],
    ]);
    expect(out[2]?.reason).toMatch(/was lost .* not sent again/);
    expect(hits.filter((h) => h.startsWith("POST"))).toHaveLength(1);
    expect(JSON.stringify(out)).not.toMatch(/Amy|Ben|123-45-6789/);
  });

  it("a failed enrollment request is reported by field paths and the portal advice, never by its messages", async () => {
    reply("GET", "/v2/members", 200, { data: [], hasMore: false });
    reply("POST", "/v3/groups/gp9/enroll/add-subscriber", 202, { enrollmentRequestId: "er1" });
    reply("GET", "/v1/enrollmentRequests/er1", 200, { id: "er1", status: "FAILED", errors: [{ path: ["subscribers", 0, "self", "ssn"], message: "SSN 123-45-6789 of Amy Lost is taken", code: "duplicate" }] });
    const [o] = await enrollHouseholds(client(), target, [{ self: self("Amy") }]);
    expect(o).toMatchObject({ index: 0, status: "failed", enrollmentRequestId: "er1" });
    expect(o?.reason).toBe("the enrollment request failed: subscribers.0.self.ssn (duplicate); the details are in the portal");
  });
});

describe("initial-enrollment (spec rule 2)", () => {
  const target = { groupPolicyId: "gp9", groupId: "G-9", planId: "pl9" };
  const path = "/v2/groups/gp9/enroll/initial-enrollment";
  const member = (memberId: string, memberType = "employee") => ({ memberId, firstName: `F${memberId}`, lastName: "Init", dateOfBirth: "1980-01-01", ssn: "123-45-6789", memberType });
  /** Answers the POST and keeps the memberIds each request carried. */
  const sent: string[][] = [];
  const accept = () =>
    svc.agent
      .get(ORIGIN)
      .intercept({ method: "POST", path })
      .reply(200, (opts) => {
        const members = (JSON.parse(String(opts.body)) as { members: { memberId: string }[] }).members;
        sent.push(members.map((m) => m.memberId));
        return JSON.stringify({ enrolled: members.length, members: [] });
      }, { headers: { "content-type": "application/json" } });
  beforeEach(() => void sent.splice(0));

  it("a lost answer is decided by the member listing by memberId: there is enrolled, missing is unknown, sent once", async () => {
    reply("GET", "/v2/members", 200, { data: [{ id: "e0", firstName: "Old", lastName: "Init", dateOfBirth: "1980-01-01" }], hasMore: false });
    reset("POST", path);
    reply("GET", "/v2/members", 200, { data: [{ id: "e0" }, { id: "e1" }], hasMore: false });
    const out = await enrollInitialMembers(client(), target, [member("e0"), member("e1"), member("d1", "dependent")]);
    expect(out.map((o) => [o.index, o.status])).toEqual([
      [0, "already"],
      [1, "enrolled"],
      [2, "unknown"],
    ]);
    expect(out[2]?.reason).toMatch(/was lost .* not sent again/);
    expect(hits.filter((h) => h.startsWith("POST"))).toEqual([`POST ${path}`]);
    expect(JSON.stringify(out)).not.toMatch(/Fe1|Fd1|123-45-6789/);
  });

  it("batches are cut only before an employee, so a dependent goes with the employee before it", async () => {
    reply("GET", "/v2/members", 200, { data: [], hasMore: false });
    accept();
    accept();
    const members = [member("e1"), member("d1", "dependent"), member("d2", "dependent"), member("e2"), member("d3", "dependent")];
    const out = await enrollInitialMembers(client(), target, members, { batchSize: 2 });
    expect(sent).toEqual([
      ["e1", "d1", "d2"],
      ["e2", "d3"],
    ]);
    expect(out.map((o) => o.status)).toEqual(["enrolled", "enrolled", "enrolled", "enrolled", "enrolled"]);
  });

  it("a 403 stops the rest: the batch failed with the operator advice, the next not sent", async () => {
    reply("GET", "/v2/members", 200, { data: [], hasMore: false });
    reply("POST", path, 403, { message: "Forbidden" });
    const out = await enrollInitialMembers(client(), target, [member("e1"), member("e2")], { batchSize: 1 });
    expect(out.map((o) => o.status)).toEqual(["failed", "not sent"]);
    expect(out[1]?.reason).toContain("The service operator must adjust your organization's permissions");
    expect(hits.filter((h) => h.startsWith("POST"))).toHaveLength(1);
  });
});

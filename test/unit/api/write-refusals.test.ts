/**
 * A write the service answered 400, 409 or 422 was refused: that is its answer, not a lost one. It
 * is never sent again (not by the client's retries, not by a caller "looking first"), and no caller
 * reads the listing to guess whether it landed. Tested where each rule lives: the client's write
 * paths (transport.ts: only a write that never left is replayed; response-errors.ts: the status is
 * the answer; lost-answer.ts: only a reset, a deadline, a 502 or 504 is lost), then the callers that
 * decide on it (group onboarding, enrollment requests, initial enrollment). Requests are counted
 * as the dispatcher sees them (MockAgent), not by what our code says it sent.
 */
import { describe, expect, it } from "vitest";
import { createClient, type ServiceClient } from "../../../src/api/client.js";
import { answerLost } from "../../../src/api/lost-answer.js";
import { enrollHouseholds } from "../../../src/eligibility/enroll-subscribers.js";
import { ApiError, OutcomeUnknownError } from "../../../src/errors.js";
import { createGroupOnce } from "../../../src/onboarding/create-group.js";
import { enrollInitialMembers } from "../../../src/onboarding/initial-enrollment.js";
import { mockService } from "../../helpers/mock-service.js";

const REFUSALS = [400, 409, 422] as const;
const svc = mockService("http://svc.test");
const hits = svc.hits;
/** The service refuses the write once (a second send would still be counted in `hits`). */
const refuse = (method: string, path: string, status: number) => svc.reply(method, path, status, { message: `refused with ${status}`, timestamp: "2026-03-01T00:00:00Z" });
const reply = svc.reply;
// Three attempts allowed, retries without delay: a refusal retried would show as a second hit.
const client = (): ServiceClient => createClient({ baseUrl: "http://svc.test", apiKey: "unit-key-refusals-93", dispatcher: svc.counting(), retry: { maxAttempts: 3, baseMs: 0 }, sleep: async () => undefined });
const posts = () => hits.filter((h) => !h.startsWith("GET"));

const group = { groupId: "G-7", adminEmail: "hr@seven.example", sponsorName: "Seven", ein: "12-3456789", planDesignId: "pd1", benefitBundleId: "bb1", vendorId: "v1", effectiveDate: "2026-01-01", terminationDate: "2026-12-31" };
const self = (firstName: string) => ({ firstName, lastName: "Refused", dateOfBirth: "1980-01-01", ssn: "123-45-6789", memberType: "employee" });
const target = { groupPolicyId: "gp7", groupId: "G-7", planId: "pl7" };

/** Every write endpoint of the client: its method and path, and the call. */
const WRITES: readonly (readonly [string, string, string, (c: ServiceClient) => Promise<unknown>])[] = [
  ["create group", "POST", "/v2/groups", (c) => c.createGroup(group)],
  ["add-subscriber", "POST", "/v3/groups/gp7/enroll/add-subscriber", (c) => c.addSubscriber("gp7", { subscribers: [{ plan: "pl7", self: self("Amy") }] })],
  ["add-dependent", "POST", "/v3/groups/gp7/enroll/sc1/add-dependent", (c) => c.addDependent("gp7", "sc1", { plan: "pl7", dependent: { ...self("Kid"), memberType: "dependent" } })],
  ["terminate", "POST", "/v3/groups/gp7/enroll/terminate", (c) => c.terminate("gp7", { memberId: "m1", coverageId: "c1", terminationDate: "2026-01-31" })],
  ["update-member", "PATCH", "/v2/members/m1", (c) => c.patchMember("m1", { lastName: "Other" })],
  ["initial-enrollment", "POST", "/v2/groups/gp7/enroll/initial-enrollment", (c) => c.initialEnrollment("gp7", { members: [{ ...self("Eve"), memberId: "e1" }] })],
];

describe("the client: a refused write is an answer", () => {
  for (const [name, method, path, call] of WRITES) {
    it.each(REFUSALS)(`${name} answered %i: an ApiError with that status, not lost, sent once`, async (status) => {
      refuse(method, path, status);
      const err = await call(client()).then(
        () => undefined,
        (e: unknown) => e,
      );
      expect(err).toBeInstanceOf(ApiError);
      expect((err as ApiError).status).toBe(status);
      expect((err as Error).message).toContain(String(status));
      expect(answerLost(err)).toBe(false);
      expect(hits).toEqual([`${method} ${path}`]);
    });
  }
});

describe("the callers: a refusal is reported as refused, never looked for as if lost", () => {
  it.each(REFUSALS)("group onboarding: create group answered %i throws it; the listing is read once, before", async (status) => {
    reply("GET", "/v2/groups", 200, { data: [], hasMore: false });
    refuse("POST", "/v2/groups", status);
    const err = await createGroupOnce(client(), group).catch((e: unknown) => e);
    expect(err).not.toBeInstanceOf(OutcomeUnknownError);
    expect(err).toBeInstanceOf(ApiError);
    expect((err as ApiError).status).toBe(status);
    expect(hits).toEqual(["GET /v2/groups", "POST /v2/groups"]);
  });

  it.each(REFUSALS)("enrollment requests: add-subscriber answered %i fails its households, not unknown; the listing is read once, before", async (status) => {
    reply("GET", "/v2/members", 200, { data: [], hasMore: false });
    refuse("POST", "/v3/groups/gp7/enroll/add-subscriber", status);
    const out = await enrollHouseholds(client(), target, [{ self: self("Amy") }, { self: self("Ben") }]);
    expect(out.map((o) => o.status)).toEqual(["failed", "failed"]);
    expect(out[0]?.reason).toContain(String(status));
    expect(hits).toEqual(["GET /v2/members", "POST /v3/groups/gp7/enroll/add-subscriber"]);
  });

  it.each(REFUSALS)("initial enrollment answered %i fails its members, not unknown; the listing is read once, before", async (status) => {
    const path = "/v2/groups/gp7/enroll/initial-enrollment";
    reply("GET", "/v2/members", 200, { data: [], hasMore: false });
    refuse("POST", path, status);
    const out = await enrollInitialMembers(client(), target, [{ ...self("Eve"), memberId: "e1" }]);
    expect(out.map((o) => o.status)).toEqual(["failed"]);
    expect(out[0]?.reason).toContain(String(status));
    expect(posts()).toEqual([`POST ${path}`]);
    expect(hits).toEqual(["GET /v2/members", `POST ${path}`]);
  });
});

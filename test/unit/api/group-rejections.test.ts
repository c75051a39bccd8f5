/**
 * The spec documents three reasons a group cannot be created (adminEmail or group number taken, an
 * EIN whose policy dates overlap, a reference to no existing record). Each becomes its own typed
 * error naming the field, however the service words it; any other 400 stays a plain ApiError.
 */
import { MockAgent } from "undici";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { createClient } from "../../../src/api/client.js";
import { ApiError, EinOverlapError, GroupTakenError, UnknownReferenceError } from "../../../src/errors.js";

const ORIGIN = "http://svc.test";
let agent: MockAgent;
beforeEach(() => {
  agent = new MockAgent();
  agent.disableNetConnect();
});
afterEach(async () => {
  agent.assertNoPendingInterceptors();
  await agent.close();
});

const group = {
  groupId: "G-77",
  adminEmail: "hr@acme.example",
  sponsorName: "Acme",
  ein: "12-3456789",
  planDesignId: "pd-9",
  benefitBundleId: "bb-2",
  vendorId: "v-4",
  effectiveDate: "2026-01-01",
  terminationDate: "2026-12-31",
};

async function rejected(body: unknown): Promise<unknown> {
  agent.get(ORIGIN).intercept({ method: "POST", path: "/v2/groups" }).reply(400, JSON.stringify(body), { headers: { "content-type": "application/json" } });
  const c = createClient({ baseUrl: ORIGIN, apiKey: "unit-key-groups-55", dispatcher: agent, retry: { maxAttempts: 1 } });
  return c.createGroup(group).then(
    () => new Error("resolved"),
    (e: unknown) => e,
  );
}

const at = { timestamp: "2026-01-01T00:00:00Z", path: "/v2/groups" };

describe("create group's documented 400s", () => {
  it("adminEmail taken: GroupTakenError on adminEmail, naming the value", async () => {
    for (const message of ["adminEmail is already used by another group", "Admin email already exists", "Duplicate admin email"]) {
      const e = await rejected({ ...at, message });
      expect(e).toBeInstanceOf(GroupTakenError);
      expect([(e as GroupTakenError).code, (e as GroupTakenError).field, (e as GroupTakenError).status]).toEqual(["GROUP_TAKEN", "adminEmail", 400]);
      expect((e as Error).message).toContain('adminEmail "hr@acme.example" is already used by another group');
    }
  });

  it("group number taken: GroupTakenError on groupId", async () => {
    for (const message of ["groupId G-77 is already used by another group", "Group number already in use"]) {
      const e = await rejected({ ...at, message });
      expect(e).toBeInstanceOf(GroupTakenError);
      expect((e as GroupTakenError).field).toBe("groupId");
      expect((e as Error).message).toContain('groupId (the group number) "G-77" is already used by another group');
    }
  });

  it("EIN overlap: EinOverlapError on ein, naming the dates and not the EIN's digits", async () => {
    const e = await rejected({ ...at, message: "A sponsor with this EIN already has a policy with an overlapping date range" });
    expect(e).toBeInstanceOf(EinOverlapError);
    expect([(e as EinOverlapError).code, (e as EinOverlapError).field]).toEqual(["EIN_OVERLAP", "ein"]);
    expect((e as Error).message).toContain("ein: a sponsor with this EIN already has a policy overlapping 2026-01-01 to 2026-12-31");
    expect((e as Error).message).not.toContain("3456789");
  });

  it("unknown references: UnknownReferenceError on the field named, with its value", async () => {
    const cases: [string, string, string][] = [
      ["planDesignId pd-9 does not reference an existing plan design", "planDesignId", "pd-9"],
      ["Benefit bundle not found", "benefitBundleId", "bb-2"],
      ["vendorId: no such vendor", "vendorId", "v-4"],
    ];
    for (const [message, field, value] of cases) {
      const e = await rejected({ ...at, message });
      expect(e).toBeInstanceOf(UnknownReferenceError);
      expect([(e as UnknownReferenceError).code, (e as UnknownReferenceError).field]).toEqual(["UNKNOWN_REFERENCE", field]);
      expect((e as Error).message).toContain(`${field} "${value}" does not reference an existing record`);
    }
  });

  it("the errors array names the field when the message does not", async () => {
    const e = await rejected({ ...at, message: "Validation failed", errors: [{ path: ["vendorId"], message: "not found", code: "invalid_reference" }] });
    expect(e).toBeInstanceOf(UnknownReferenceError);
    expect((e as UnknownReferenceError).field).toBe("vendorId");
  });

  it("any other 400 (a validation failure) stays a plain ApiError", async () => {
    const e = await rejected({ ...at, message: "Validation failed", errors: [{ path: ["adminEmail"], message: "Invalid email", code: "invalid_format" }] });
    expect(e).toBeInstanceOf(ApiError);
    expect(e).not.toBeInstanceOf(GroupTakenError);
    expect(e).not.toBeInstanceOf(UnknownReferenceError);
    expect((e as ApiError).code).toBe("API_ERROR");
  });
});

import { describe, expect, it } from "vitest";
import type { z } from "zod";
import * as S from "../../schemas/index.js";

const address = { line1: "1 Main St", line2: null, city: "Zürich", state: "CA", zip: "94000" };
const coverage = {
  id: "2f1c7a52-0000-4000-8000-000000000001",
  groupId: "G-100",
  groupPolicyId: "gp-1",
  planId: "plan-1",
  subscriberCoverageId: "sc-1",
  startDate: "2025-01-01",
  endDate: null,
  status: "active",
};
const member = {
  id: "9b2e4a10-0000-4000-8000-000000000002",
  subscriberId: "S-1",
  firstName: "Zoë",
  lastName: "O'Brien",
  dateOfBirth: "2000-02-29",
  ssn: "123-45-6789",
  gender: "F",
  memberType: "employee",
  relationship: "self",
  email: "zoe@example.test",
  phone: "+1 555 0100",
  address,
  createdAt: "2025-01-01T00:00:00Z",
  coverages: [coverage],
};
const enrollee = { firstName: "A", lastName: "B", dateOfBirth: "1990-01-01", ssn: "123456789", memberType: "employee", address };

/** One sample per schema: [name, schema, sample, the path to an object that gets an unknown field]. */
const samples: [string, z.ZodType, Record<string, unknown>, string[]][] = [
  ["Design", S.Design, { id: "d1", name: "Gold PPO", planType: "PPO", configuration: { deductible: "1500.00" } }, ["configuration"]],
  [
    "Group",
    S.Group,
    {
      id: "gp-1",
      groupId: "G-100",
      sponsorId: "sp-1",
      sponsorName: "Acme",
      ein: "12-3456789",
      adminEmail: "hr@acme.test",
      effectiveDate: "2025-01-01",
      terminationDate: "2025-12-31",
      onboardingStatus: "live",
      createdAt: "2024-12-01T00:00:00Z",
      plans: [{ id: "plan-1", name: "Gold", basePlanDesignId: "d1", benefitBundleId: "bb-1", vendorId: "v-1" }],
    },
    ["plans", "0"],
  ],
  ["Member", S.Member, member, ["address"]],
  ["Coverage", S.Coverage, coverage, []],
  [
    "MedicalClaim",
    S.MedicalClaim,
    {
      id: "cl-1",
      claimNumber: "C-1",
      memberId: member.id,
      coverageId: coverage.id,
      groupId: "G-100",
      planId: "plan-1",
      serviceDateFrom: "2025-02-01",
      serviceDateTo: "2025-02-02",
      claimStatus: "paid",
      claimAmount: "1234.50",
      allowedAmount: "1000.00",
      paidAmount: "800.00",
      processing: { receivedDate: "2025-02-03", adjudicatedDate: "2025-02-10", paidDate: "2025-02-12", denialReason: null },
      lines: [{ code: "99213", amount: "1234.50" }],
      createdAt: "2025-02-03T00:00:00Z",
    },
    ["processing"],
  ],
  ["EnrollmentRequest", S.EnrollmentRequest, { id: "er-1", status: "failed", createdAt: "x", completedAt: "y", errors: [{ field: "ssn" }] }, []],
  ["EnrollmentRequestAccepted", S.EnrollmentRequestAccepted, { enrollmentRequestId: "er-1" }, []],
  [
    "CreateGroupBody",
    S.CreateGroupBody,
    {
      groupId: "G-100",
      adminEmail: "hr@acme.test",
      sponsorName: "Acme",
      ein: "12-3456789",
      planDesignId: "d1",
      benefitBundleId: "bb-1",
      vendorId: "v-1",
      effectiveDate: "2025-01-01",
      terminationDate: "2025-12-31",
    },
    [],
  ],
  ["InitialEnrollmentBody", S.InitialEnrollmentBody, { members: [{ ...enrollee, memberId: "m-1" }] }, ["members", "0"]],
  ["InitialEnrollmentResult", S.InitialEnrollmentResult, { enrolled: 1, members: [member] }, ["members", "0", "coverages", "0"]],
  [
    "AddSubscriberBody",
    S.AddSubscriberBody,
    { subscribers: [{ plan: "plan-1", self: enrollee, spouse: enrollee, children: [enrollee], tags: ["new-hire"] }] },
    ["subscribers", "0", "self"],
  ],
  ["AddDependentBody", S.AddDependentBody, { plan: "plan-1", dependent: { ...enrollee, relationship: "child" } }, ["dependent"]],
  ["TerminateBody", S.TerminateBody, { memberId: "m-1", coverageId: "c-1", terminationDate: "2025-06-30", reason: "left" }, []],
  ["TerminateResult", S.TerminateResult, { ...coverage, status: "terminated", endDate: "2025-06-30" }, []],
  ["PatchMemberBody", S.PatchMemberBody, { lastName: "Smith", address }, ["address"]],
  [
    "ErrorBody",
    S.ErrorBody,
    { timestamp: "2025-01-01T00:00:00Z", path: "/v2/groups", message: "Validation failed", errors: [{ path: ["ein"], message: "Required", code: "invalid_type" }] },
    ["errors", "0"],
  ],
  ["WebhookEvent", S.WebhookEvent, { id: "ev-1", type: "member_update", payload: { id: member.id } }, ["payload"]],
];

/** A deep copy with `future` fields added at the top and at `path`. */
function withUnknownFields(sample: Record<string, unknown>, path: string[]): Record<string, unknown> {
  const copy = structuredClone(sample) as Record<string, unknown>;
  copy.futureField = { nested: ["kept", 1, null] };
  let target: Record<string, unknown> = copy;
  for (const key of path) target = target[key] as Record<string, unknown>;
  target.futureNested = "kept too";
  return copy;
}

describe("schemas", () => {
  it.each(samples)("a %s sample parses to itself", (_name, schema, sample) => {
    expect(schema.parse(sample)).toEqual(sample);
  });

  it.each(samples)("an unknown %s field survives parse and re-serialisation", (_name, schema, sample, path) => {
    const input = withUnknownFields(sample, path);
    const roundTripped = JSON.parse(JSON.stringify(schema.parse(input))) as Record<string, unknown>;
    expect(roundTripped).toEqual(input);
    expect(schema.parse(roundTripped)).toEqual(input);
  });

  it("a missing optional field is fine, a missing id is not", () => {
    expect(S.Member.parse({ id: "m" })).toEqual({ id: "m" });
    expect(S.Member.safeParse({ firstName: "x" }).success).toBe(false);
    expect(S.Member.safeParse({ id: 7 }).success).toBe(false);
  });

  it("keeps amounts as decimal strings and refuses floats", () => {
    expect(S.MedicalClaim.parse({ id: "c", claimAmount: "0.10" }).claimAmount).toBe("0.10");
    expect(S.MedicalClaim.safeParse({ id: "c", claimAmount: 0.1 }).success).toBe(false);
  });

  it("accepts an unknown coverage status, but only the documented enrollment request statuses", () => {
    expect(S.Coverage.parse({ id: "c", status: "suspended" }).status).toBe("suspended");
    expect(S.EnrollmentRequest.safeParse({ id: "e", status: "queued" }).success).toBe(false);
  });
});

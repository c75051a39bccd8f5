/**
 * The example of each file in the data dictionary (docs/outputs.md): one made-up record per
 * resource, as the service sends it (after the snapshot's SSN rule: `ssn_token` and `ssn_last4`,
 * never an SSN), and the fields an update of it changed. Rendered through the writers' own row
 * functions, so an example shows the bytes a loader will read.
 */
import type { StoredResource } from "../store/schema/resources.js";

export interface Example {
  readonly id: string;
  readonly record: Record<string, unknown>;
  /** The example is an update of these fields (as stored: dotted paths). */
  readonly changed: readonly string[];
}

export const Examples: Record<StoredResource, Example> = {
  designs: { id: "d-100", record: { id: "d-100", name: "Gold PPO 1500", planType: "PPO" }, changed: ["name"] },
  groups: {
    id: "gp-200",
    record: {
      id: "gp-200", groupId: "G-200", sponsorId: "sp-9", sponsorName: "Acme Tools", ein: "12-3456789", adminEmail: "benefits@acme.example",
      effectiveDate: "2026-01-01", terminationDate: null, onboardingStatus: "active", createdAt: "2025-11-03T15:04:05Z",
    },
    changed: ["onboardingStatus"],
  },
  plans: {
    id: "p-300",
    record: { id: "p-300", groupPolicyId: "gp-200", name: "Gold PPO 1500", basePlanDesignId: "d-100", benefitBundleId: "bb-1", vendorId: "v-7" },
    changed: ["vendorId"],
  },
  members: {
    id: "m-400",
    record: {
      id: "m-400", subscriberId: "m-400", firstName: "Ana", lastName: "Ortiz", dateOfBirth: "1984-07-19",
      ssn_token: "3f1c9a0e5b7d2c4f6a8e0b1d3c5e7f9a1b3d5f7e9c0a2e4f6b8d0c2e4a6f8b0d", ssn_last4: "0042", gender: "F",
      memberType: "subscriber", relationship: "self", email: "ana.ortiz@example.com", phone: "+1-512-555-0142",
      address: { line1: "12 Oak St", line2: "Apt 3", city: "Austin", state: "TX", zip: "78701" }, createdAt: "2026-01-05T14:03:00Z",
    },
    changed: ["address.city", "lastName"],
  },
  coverages: {
    id: "c-500",
    record: {
      id: "c-500", memberId: "m-400", groupId: "G-200", groupPolicyId: "gp-200", planId: "p-300", subscriberCoverageId: "c-500",
      startDate: "2026-01-01", endDate: "2026-12-31", status: "active",
    },
    changed: ["endDate"],
  },
  claims: {
    id: "k-600",
    record: {
      id: "k-600", claimNumber: "CLM-2026-000600", memberId: "m-400", coverageId: "c-500", groupId: "G-200", planId: "p-300",
      serviceDateFrom: "2026-02-10", serviceDateTo: "2026-02-10", claimStatus: "paid", claimAmount: "1234.50", allowedAmount: "980.00",
      paidAmount: "784.00", processing: { receivedDate: "2026-02-12", adjudicatedDate: "2026-02-20", paidDate: "2026-02-25", denialReason: null },
      lines: [{ code: "99213", amount: "1034.50" }, { code: "87086", amount: "200.00" }],
      createdAt: "2026-02-12T09:30:00Z",
    },
    changed: ["claimStatus", "paidAmount", "processing.paidDate"],
  },
};

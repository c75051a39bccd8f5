/** The resources the snapshot keeps, in the order a run walks and applies them. */
export const StoredResources = ["designs", "groups", "plans", "members", "coverages", "claims"] as const;
export type StoredResource = (typeof StoredResources)[number];

/** The resources a run walks; plans and coverages come inside their parents. */
export const WalkedResources = ["designs", "groups", "members", "claims"] as const;
export type WalkedResource = (typeof WalkedResources)[number];

/** `rs` in the order a run walks them. */
export function orderResources(rs: readonly WalkedResource[]): WalkedResource[] {
  return WalkedResources.filter((r) => rs.includes(r));
}

/** Whether a run that walks `walked` answers for `r` (plans come with groups, coverages with members). */
export function isWalkedOrChild(r: StoredResource, walked: readonly WalkedResource[]): boolean {
  if (r === "plans") return walked.includes("groups");
  if (r === "coverages") return walked.includes("members");
  return (walked as readonly string[]).includes(r);
}

/** The children each walked resource carries inside its records. */
export const ChildOf: Partial<Record<WalkedResource, { child: StoredResource; field: string; parentKey: string }>> = {
  groups: { child: "plans", field: "plans", parentKey: "groupPolicyId" },
  members: { child: "coverages", field: "coverages", parentKey: "memberId" },
};

/**
 * The documented scalar fields of each resource: the views expose one column per field (derived
 * with json_extract from the stored JSON, so nothing is stored twice). Nested objects flatten
 * with an underscore in column names (`address_city` from `address.city`).
 */
export const ViewColumns: Record<StoredResource, readonly string[]> = {
  designs: ["name", "planType"],
  groups: ["groupId", "sponsorId", "sponsorName", "ein", "adminEmail", "effectiveDate", "terminationDate", "onboardingStatus", "createdAt"],
  plans: ["groupPolicyId", "name", "basePlanDesignId", "benefitBundleId", "vendorId"],
  members: [
    "subscriberId", "firstName", "lastName", "dateOfBirth", "ssn_token", "ssn_last4", "gender", "memberType",
    "relationship", "email", "phone", "address.line1", "address.line2", "address.city", "address.state", "address.zip", "createdAt",
  ],
  coverages: ["memberId", "groupId", "groupPolicyId", "planId", "subscriberCoverageId", "startDate", "endDate", "status"],
  claims: [
    "claimNumber", "memberId", "coverageId", "groupId", "planId", "serviceDateFrom", "serviceDateTo", "claimStatus",
    "claimAmount", "allowedAmount", "paidAmount", "processing.receivedDate", "processing.adjudicatedDate",
    "processing.paidDate", "processing.denialReason", "createdAt",
  ],
};

export const columnName = (path: string): string => path.replace(/\./g, "_");

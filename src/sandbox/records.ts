/** The JSON shapes the sandbox serves (see /work/shared/design/api-shapes.md). */

export interface AddressRec {
  line1: string;
  line2: string | null;
  city: string;
  state: string;
  zip: string;
}

export interface CoverageRec {
  id: string;
  groupId: string;
  groupPolicyId: string;
  planId: string;
  subscriberCoverageId: string;
  startDate: string;
  endDate: string | null;
  status: "active" | "terminated" | "pending";
}

export interface MemberRec {
  id: string;
  subscriberId: string;
  firstName: string;
  lastName: string;
  dateOfBirth: string;
  ssn: string;
  gender: string;
  memberType: string;
  relationship: string;
  email: string | null;
  phone: string | null;
  address: AddressRec;
  createdAt: string;
  coverages: CoverageRec[];
}

export interface PlanRec {
  id: string;
  name: string;
  basePlanDesignId: string;
  benefitBundleId: string;
  vendorId: string;
}

export interface GroupRec {
  id: string;
  groupId: string;
  sponsorId: string;
  sponsorName: string;
  ein: string;
  adminEmail: string;
  effectiveDate: string;
  terminationDate: string;
  onboardingStatus: string;
  createdAt: string;
  plans: PlanRec[];
}

export interface DesignRec {
  id: string;
  name: string;
  planType: string;
  configuration: Record<string, unknown>;
  createdAt: string;
}

export interface ClaimLineRec {
  code: string;
  amount: string;
}

export interface ClaimRec {
  id: string;
  claimNumber: string;
  memberId: string;
  coverageId: string;
  groupId: string;
  planId: string;
  serviceDateFrom: string;
  serviceDateTo: string;
  claimStatus: "pending" | "paid" | "denied";
  claimAmount: string;
  allowedAmount: string | null;
  paidAmount: string | null;
  processing: { receivedDate: string; adjudicatedDate: string | null; paidDate: string | null; denialReason: string | null };
  lines: ClaimLineRec[];
  createdAt: string;
}

export interface VendorRec {
  id: string;
  name: string;
  role: string;
}

export interface BundleRec {
  id: string;
  name: string;
}

/** Cents → `"1234.50"`. Amounts are decimal strings, never floats. */
export function money(cents: number): string {
  const c = Math.round(cents);
  const sign = c < 0 ? "-" : "";
  const a = Math.abs(c);
  return `${sign}${Math.floor(a / 100)}.${String(a % 100).padStart(2, "0")}`;
}

/** A deep copy of a JSON record (records are plain JSON, so this is exact). */
export function cloneRec<T>(rec: T): T {
  return JSON.parse(JSON.stringify(rec)) as T;
}

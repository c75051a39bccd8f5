/**
 * The group as a census is compared with: its policy, its plans, and each member with a coverage in
 * it, SSN as a token only. Read from the snapshot (`census plan`) or from the service (`census
 * apply`), both through {@link groupMember}, so the two cannot disagree on what a member is.
 */
import { ssnToken } from "../store/pii/pii.js";

export interface GroupCoverage {
  readonly id: string;
  readonly planId: string | null;
  /** The subscriber's coverage this one hangs from (its own id for a subscriber). */
  readonly subscriberCoverageId: string | null;
  readonly startDate: string | null;
  readonly endDate: string | null;
  readonly status: string | null;
}

export interface GroupMember {
  readonly memberId: string;
  readonly firstName: string | null;
  readonly lastName: string | null;
  readonly dateOfBirth: string | null;
  readonly ssnToken: string | null;
  readonly gender: string | null;
  readonly email: string | null;
  readonly phone: string | null;
  readonly address: { readonly line1: string | null; readonly line2: string | null; readonly city: string | null; readonly state: string | null; readonly zip: string | null };
  /** The member's coverage in this group policy (the open one, else the latest). */
  readonly coverage: GroupCoverage;
}

export interface GroupView {
  readonly groupPolicyId: string;
  readonly groupNumber: string | null;
  /** The planIds of the group's plans, as the group listing gives them. */
  readonly plans: readonly string[];
  readonly members: readonly GroupMember[];
}

/** The SSN token of a plain SSN as a record holds it (text or number, any separators); null when there is none. */
export function plainSsnToken(ssn: unknown, key: Buffer): string | null {
  const digits = typeof ssn === "string" || typeof ssn === "number" ? String(ssn).replace(/\D/g, "") : "";
  return digits === "" ? null : ssnToken(digits, key);
}

const str = (v: unknown): string | null => (typeof v === "string" && v !== "" ? v : null);
const obj = (v: unknown): Record<string, unknown> => (v !== null && typeof v === "object" && !Array.isArray(v) ? (v as Record<string, unknown>) : {});

/**
 * A member record (the service's, or the snapshot's `data`) as the census sees it, or undefined
 * when it has no coverage in `groupPolicyId`. `ssnToken` is computed by the caller: the
 * snapshot's is stored, the service's is made from the plain SSN at once.
 *
 * @example groupMember(JSON.parse(row.data), "gp1", (m) => m.ssn_token as string)
 */
export function groupMember(record: unknown, groupPolicyId: string, ssnTokenOf: (m: Record<string, unknown>) => string | null): GroupMember | undefined {
  const m = obj(record);
  const id = str(m.id);
  if (id === null) return undefined;
  const mine = (Array.isArray(m.coverages) ? m.coverages : []).map(obj).filter((c) => c.groupPolicyId === groupPolicyId && str(c.id) !== null);
  if (mine.length === 0) return undefined;
  // The open coverage is the one a census talks about; a member re-added after a termination has two.
  const open = mine.filter((c) => str(c.endDate) === null && c.status !== "terminated");
  const pick = (open.length > 0 ? open : mine).reduce((a, b) => ((str(b.startDate) ?? "") >= (str(a.startDate) ?? "") ? b : a));
  const a = obj(m.address);
  return {
    memberId: id,
    firstName: str(m.firstName),
    lastName: str(m.lastName),
    dateOfBirth: str(m.dateOfBirth),
    ssnToken: ssnTokenOf(m),
    gender: str(m.gender),
    email: str(m.email),
    phone: str(m.phone),
    address: { line1: str(a.line1), line2: str(a.line2), city: str(a.city), state: str(a.state), zip: str(a.zip) },
    coverage: {
      id: pick.id as string,
      planId: str(pick.planId),
      subscriberCoverageId: str(pick.subscriberCoverageId),
      startDate: str(pick.startDate),
      endDate: str(pick.endDate),
      status: str(pick.status),
    },
  };
}

/**
 * Planted inconsistencies: records the reconciliation report's consistency checks must find, one
 * check each and nothing besides. Each is a new household (its own member, coverages and claims),
 * so no generated record changes and no other check fires because of it.
 */
import { addYears, dayNum, isoDay } from "./dates.js";
import { randomUuid } from "./ids.js";
import { Kind, Rng, hash32 } from "./prng.js";
import { randomAddress, randomLastName, randomMember } from "./person.js";
import { money, type ClaimRec, type CoverageRec, type GroupRec, type MemberRec } from "./records.js";
import type { SandboxState } from "./state.js";

/**
 * The kinds of bad data the sandbox plants, named by the sandbox itself: it stands in for the
 * service and shares no module with the product (a test checks that the report has a check of the
 * same name for each kind, so the two cannot drift apart unnoticed).
 */
export const PlantedKinds = [
  "claim_outside_coverage",
  "claim_member_not_covered_in_group",
  "coverage_plan_not_in_group",
  "member_of_terminated_group",
  "overlapping_coverages",
  "claim_amount_not_decimal",
] as const;
export type PlantedKind = (typeof PlantedKinds)[number];

/**
 * What was planted: per kind, the id each finding is keyed by: a claim, a coverage, or for
 * overlapping coverages the two coverage ids sorted and joined by `+`.
 */
export type PlantedInconsistencies = Record<PlantedKind, string[]>;

export function emptyPlanted(): PlantedInconsistencies {
  return Object.fromEntries(PlantedKinds.map((c) => [c, []])) as unknown as PlantedInconsistencies;
}

/**
 * Plant one inconsistency of each kind, as of the state's today. Needs two current groups with plans
 * and one terminated (prior-year) group; a world too small for that gets none of the kinds it lacks.
 */
export function plantInconsistencies(state: SandboxState): PlantedInconsistencies {
  const rng = new Rng(hash32(state.world.seed, Kind.write, 77));
  const today = state.today;
  const planted = emptyPlanted();
  const current = state.world.current.map((g) => state.getGroup(g.rec.id)).filter((g): g is GroupRec => !!g && g.plans.length > 0);
  const prior = state.world.groups
    .filter((g) => g.kind === "prior" && g.endDay < today)
    .map((g) => state.getGroup(g.rec.id))
    .find((g): g is GroupRec => !!g && g.plans.length > 0);
  const [g, h] = current;
  if (!g) return planted;

  const person = (cov: Omit<CoverageRec, "id" | "subscriberCoverageId">): MemberRec =>
    randomMember(rng, {
      relationship: "self",
      subscriberId: state.nextSubscriberId(),
      lastName: randomLastName(rng),
      address: randomAddress(rng),
      phone: `+1${rng.range(201, 989)}555${String(rng.int(10000)).padStart(4, "0")}`,
      year: Number(isoDay(today).slice(0, 4)),
      createdAt: state.nextCreatedAt(),
      coverage: cov,
    });
  const claim = (m: MemberRec, cov: CoverageRec, groupId: string, planId: string, serviceDay: number): ClaimRec => {
    const cents = rng.range(5_000, 90_000);
    const allowed = Math.round(cents * 0.7);
    return {
      id: randomUuid(rng),
      claimNumber: `C${isoDay(serviceDay).replaceAll("-", "")}P${String(rng.int(100000)).padStart(5, "0")}`,
      memberId: m.id,
      coverageId: cov.id,
      groupId,
      planId,
      serviceDateFrom: isoDay(serviceDay),
      serviceDateTo: isoDay(serviceDay),
      claimStatus: "paid",
      claimAmount: money(cents),
      allowedAmount: money(allowed),
      paidAmount: money(Math.round(allowed * 0.8)),
      processing: { receivedDate: isoDay(serviceDay + 2), adjudicatedDate: isoDay(serviceDay + 5), paidDate: isoDay(serviceDay + 5), denialReason: null },
      lines: [{ code: "99213", amount: money(cents) }],
      createdAt: state.nextCreatedAt(),
    };
  };
  const gPlan = g.plans[0]!;

  // A member covered since 30 days ago, with a claim served 45 days ago (before the coverage) and,
  // when there is a second group, a claim filed under that group, where the member has no coverage.
  const m1 = person({ groupId: g.groupId, groupPolicyId: g.id, planId: gPlan.id, startDate: isoDay(today - 30), endDate: null, status: "active" });
  const c1 = m1.coverages[0]!;
  state.insertMember(m1);
  const early = claim(m1, c1, g.groupId, gPlan.id, today - 45);
  state.insertClaim(early);
  planted.claim_outside_coverage.push(early.id);
  if (h) {
    const elsewhere = claim(m1, c1, h.groupId, h.plans[0]!.id, today - 5);
    state.insertClaim(elsewhere);
    planted.claim_member_not_covered_in_group.push(elsewhere.id);
    // A coverage in group g on a plan of group h.
    const m2 = person({ groupId: g.groupId, groupPolicyId: g.id, planId: h.plans[0]!.id, startDate: g.effectiveDate, endDate: null, status: "active" });
    state.insertMember(m2);
    planted.coverage_plan_not_in_group.push(m2.coverages[0]!.id);
  }
  if (prior) {
    // Still active in a group whose plan year ended.
    const m3 = person({ groupId: prior.groupId, groupPolicyId: prior.id, planId: prior.plans[0]!.id, startDate: prior.effectiveDate, endDate: null, status: "active" });
    state.insertMember(m3);
    planted.member_of_terminated_group.push(m3.coverages[0]!.id);
  }
  // Two coverages of one member on one plan whose dates overlap.
  const start = dayNum(g.effectiveDate);
  const m4 = person({ groupId: g.groupId, groupPolicyId: g.id, planId: gPlan.id, startDate: g.effectiveDate, endDate: null, status: "active" });
  const second: CoverageRec = {
    id: randomUuid(rng),
    groupId: g.groupId,
    groupPolicyId: g.id,
    planId: gPlan.id,
    subscriberCoverageId: m4.coverages[0]!.subscriberCoverageId,
    startDate: isoDay(start + 30),
    endDate: isoDay(Math.min(start + 90, addYears(start, 1) - 1)),
    status: "terminated",
  };
  m4.coverages.push(second);
  state.insertMember(m4);
  planted.overlapping_coverages.push([m4.coverages[0]!.id, second.id].sort().join("+"));
  return planted;
}

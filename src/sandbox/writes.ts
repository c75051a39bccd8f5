/**
 * The write endpoints' rules: the sandbox's own validation of each body (write-bodies.ts: a 400 with
 * the `errors` array), the documented uniqueness and reference rules, and the changes the reads then
 * show. How each answer is shaped is the routes' choice (answer-shapes.ts).
 */
import type { EnrollmentRequests, EnrollmentRequestRec } from "./enrollment-requests.js";
import { HttpError } from "./http-util.js";
import { randomUuid, shortId } from "./ids.js";
import { formatSsn } from "./person.js";
import { Kind, type Rng } from "./prng.js";
import type { AddressRec, CoverageRec, GroupRec, MemberRec } from "./records.js";
import type { SandboxState } from "./state.js";
import { WriteBodies, parseBody, type PersonInput } from "./write-bodies.js";

function requireGroup(state: SandboxState, groupPolicyId: string): GroupRec {
  const g = state.getGroup(groupPolicyId);
  if (!g) throw new HttpError(404, `Group policy ${groupPolicyId} not found`);
  return g;
}

const digits = (s: string): string => s.replace(/\D/g, "");

export class Writes {
  private seq = 0;
  constructor(
    private readonly state: SandboxState,
    private readonly rng: Rng,
    private readonly enrollments: EnrollmentRequests,
  ) {}

  /** POST /v2/groups. */
  createGroup(body: unknown): GroupRec {
    const b = parseBody(WriteBodies.CreateGroup, body);
    const { state } = this;
    if (b.terminationDate < b.effectiveDate) throw new HttpError(400, "Validation failed", [{ path: ["terminationDate"], message: "terminationDate is before effectiveDate", code: "custom" }]);
    if (state.groups.some((g) => g.adminEmail.toLowerCase() === b.adminEmail.toLowerCase())) throw new HttpError(400, "adminEmail is already used by another group");
    if (state.groupByNumber(b.groupId)) throw new HttpError(400, `groupId ${b.groupId} is already used by another group`);
    const sameEin = state.groups.filter((g) => digits(g.ein) === digits(b.ein));
    if (sameEin.some((g) => g.effectiveDate <= b.terminationDate && b.effectiveDate <= g.terminationDate))
      throw new HttpError(400, "A sponsor with this EIN already has a policy with an overlapping date range");
    const design = state.designs.find((d) => d.id === b.planDesignId);
    if (!design) throw new HttpError(400, `planDesignId ${b.planDesignId} does not reference an existing plan design`);
    if (!state.world.bundles.some((x) => x.id === b.benefitBundleId)) throw new HttpError(400, `benefitBundleId ${b.benefitBundleId} does not reference an existing benefit bundle`);
    if (!state.world.vendors.some((x) => x.id === b.vendorId)) throw new HttpError(400, `vendorId ${b.vendorId} does not reference an existing vendor`);
    this.seq++;
    const group: GroupRec = {
      id: shortId("gp", state.world.seed, Kind.write, this.seq),
      groupId: b.groupId,
      sponsorId: sameEin[0]?.sponsorId ?? shortId("sp", state.world.seed, Kind.write, this.seq),
      sponsorName: b.sponsorName,
      ein: `${digits(b.ein).slice(0, 2)}-${digits(b.ein).slice(2)}`,
      adminEmail: b.adminEmail,
      effectiveDate: b.effectiveDate,
      terminationDate: b.terminationDate,
      onboardingStatus: "in_progress",
      createdAt: state.nextCreatedAt(),
      plans: [
        {
          id: shortId("pln", state.world.seed, Kind.write, this.seq),
          name: `${design.name} ${b.effectiveDate.slice(0, 4)}`,
          basePlanDesignId: design.id,
          benefitBundleId: b.benefitBundleId,
          vendorId: b.vendorId,
        },
      ],
    };
    state.insertGroup(group);
    return group;
  }

  private newMember(input: PersonInput, id: string, subscriberId: string, coverage: Omit<CoverageRec, "id" | "subscriberCoverageId"> & { subscriberCoverageId?: string }): MemberRec {
    const covId = randomUuid(this.rng);
    const a = input.address;
    const address: AddressRec = { line1: a?.line1 ?? "", line2: a?.line2 ?? null, city: a?.city ?? "", state: a?.state ?? "", zip: a?.zip ?? "" };
    const relationship = input.relationship ?? (input.memberType === "employee" || input.memberType === "subscriber" ? "self" : "dependent");
    return {
      id,
      subscriberId,
      firstName: input.firstName,
      lastName: input.lastName,
      dateOfBirth: input.dateOfBirth,
      ssn: formatSsn(input.ssn),
      gender: input.gender ?? "U",
      memberType: input.memberType,
      relationship,
      email: input.email ?? null,
      phone: input.phone ?? null,
      address,
      createdAt: this.state.nextCreatedAt(),
      coverages: [{ ...coverage, id: covId, subscriberCoverageId: coverage.subscriberCoverageId ?? covId }],
    };
  }

  private coverageFor(g: GroupRec, planId: string, startDate: string): Omit<CoverageRec, "id" | "subscriberCoverageId"> {
    return { groupId: g.groupId, groupPolicyId: g.id, planId, startDate, endDate: null, status: startDate > this.state.todayIso ? "pending" : "active" };
  }

  /** POST /v2/groups/{gp}/enroll/initial-enrollment: members at group start, synchronously. */
  initialEnrollment(groupPolicyId: string, body: unknown): { enrolled: number; members: MemberRec[] } {
    const g = requireGroup(this.state, groupPolicyId);
    const b = parseBody(WriteBodies.InitialEnrollment, body);
    const seen = new Set<string>();
    b.members.forEach((m, i) => {
      if (this.state.getMember(m.memberId) || seen.has(m.memberId)) throw new HttpError(400, "Validation failed", [{ path: ["members", i, "memberId"], message: `memberId ${m.memberId} is already enrolled`, code: "custom" }]);
      seen.add(m.memberId);
    });
    const plan = g.plans[0];
    if (!plan) throw new HttpError(400, "The group has no plan to enroll into");
    const out: MemberRec[] = [];
    let subscriber: MemberRec | undefined;
    for (const input of b.members) {
      const isSubscriber = input.memberType === "employee" || input.memberType === "subscriber" || !subscriber;
      const cov = this.coverageFor(g, plan.id, g.effectiveDate);
      const sub = subscriber;
      const m = isSubscriber
        ? this.newMember(input, input.memberId, this.state.nextSubscriberId(), cov)
        : this.newMember(input, input.memberId, sub?.subscriberId ?? "", { ...cov, subscriberCoverageId: sub?.coverages[0]?.id ?? "" });
      if (isSubscriber) subscriber = m;
      this.state.insertMember(m);
      out.push(m);
    }
    return { enrolled: out.length, members: out };
  }

  /** POST /v3/groups/{gp}/enroll/add-subscriber: an enrollment request, applied later. */
  addSubscriber(groupPolicyId: string, body: unknown): EnrollmentRequestRec {
    requireGroup(this.state, groupPolicyId);
    const b = parseBody(WriteBodies.AddSubscriber, body);
    const req = this.enrollments.submit(() => {
      const g = this.state.getGroup(groupPolicyId);
      if (!g) return [{ path: [], message: "group no longer exists", code: "not_found" }];
      const errors = b.subscribers.flatMap((s, i) => (g.plans.some((p) => p.id === s.plan) ? [] : [{ path: ["subscribers", i, "plan"], message: `plan ${s.plan} is not a plan of group ${g.groupId}`, code: "invalid_reference" }]));
      if (errors.length) return errors;
      const start = this.state.todayIso;
      for (const s of b.subscribers) {
        const subscriberId = this.state.nextSubscriberId();
        const cov = this.coverageFor(g, s.plan, start);
        const self = this.newMember(s.self, randomUuid(this.rng), subscriberId, cov);
        this.state.insertMember(self);
        const scid = self.coverages[0]?.id ?? "";
        for (const d of [...(s.spouse ? [{ ...s.spouse, relationship: s.spouse.relationship ?? "spouse" }] : []), ...(s.children ?? []).map((c) => ({ ...c, relationship: c.relationship ?? "child" }))])
          this.state.insertMember(this.newMember(d, randomUuid(this.rng), subscriberId, { ...cov, subscriberCoverageId: scid }));
      }
      return [];
    });
    return req;
  }

  /** POST /v3/groups/{gp}/enroll/{scid}/add-dependent. */
  addDependent(groupPolicyId: string, subscriberCoverageId: string, body: unknown): EnrollmentRequestRec {
    requireGroup(this.state, groupPolicyId);
    const subscriber = this.state.memberOfCoverage(subscriberCoverageId);
    const subCov = subscriber?.coverages.find((c) => c.id === subscriberCoverageId);
    if (!subscriber || !subCov || subCov.groupPolicyId !== groupPolicyId) throw new HttpError(404, `Subscriber coverage ${subscriberCoverageId} not found in group policy ${groupPolicyId}`);
    const b = parseBody(WriteBodies.AddDependent, body);
    const req = this.enrollments.submit(() => {
      const g = this.state.getGroup(groupPolicyId);
      if (!g || !g.plans.some((p) => p.id === b.plan)) return [{ path: ["plan"], message: `plan ${b.plan} is not a plan of this group`, code: "invalid_reference" }];
      const cov = { ...this.coverageFor(g, b.plan, this.state.todayIso), subscriberCoverageId };
      const dep = { ...b.dependent, relationship: b.dependent.relationship ?? "dependent" };
      this.state.insertMember(this.newMember(dep, randomUuid(this.rng), subscriber.subscriberId, cov));
      return [];
    });
    return req;
  }

  /** POST /v3/groups/{gp}/enroll/terminate: ends a coverage; gives it and its member. */
  terminate(groupPolicyId: string, body: unknown): { coverage: CoverageRec; member: MemberRec } {
    requireGroup(this.state, groupPolicyId);
    const b = parseBody(WriteBodies.Terminate, body);
    const m = this.state.memberForUpdate(b.memberId);
    if (!m) throw new HttpError(404, `Member ${b.memberId} not found`);
    const cov = b.coverageId ? m.coverages.find((c) => c.id === b.coverageId && c.groupPolicyId === groupPolicyId) : m.coverages.filter((c) => c.groupPolicyId === groupPolicyId).pop();
    if (!cov) throw new HttpError(400, "The member has no such coverage in this group policy");
    if (b.terminationDate < cov.startDate) throw new HttpError(400, "Validation failed", [{ path: ["terminationDate"], message: "terminationDate is before the coverage start", code: "custom" }]);
    cov.endDate = b.terminationDate;
    cov.status = "terminated";
    this.state.putMember(m);
    return { coverage: cov, member: m };
  }

  /** PATCH /v2/members/{id}: demographic fields only. */
  patchMember(memberId: string, body: unknown): MemberRec {
    const m = this.state.memberForUpdate(memberId);
    if (!m) throw new HttpError(404, `Member ${memberId} not found`);
    const b = parseBody(WriteBodies.PatchMember, body);
    const forbidden = Object.keys(b).filter((k) => ["id", "ssn", "coverages", "createdAt", "subscriberId", "memberType"].includes(k));
    if (forbidden.length) throw new HttpError(400, "Validation failed", forbidden.map((k) => ({ path: [k], message: `${k} cannot be changed here`, code: "custom" })));
    if (b.firstName !== undefined) m.firstName = b.firstName;
    if (b.lastName !== undefined) m.lastName = b.lastName;
    if (b.dateOfBirth !== undefined) m.dateOfBirth = b.dateOfBirth;
    if (b.gender !== undefined) m.gender = b.gender;
    if (b.email !== undefined) m.email = b.email;
    if (b.phone !== undefined) m.phone = b.phone;
    if (b.address !== undefined) m.address = { ...m.address, ...(b.address as Partial<AddressRec>) };
    this.state.putMember(m);
    return m;
  }
}


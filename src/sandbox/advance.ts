/**
 * One simulated day of realistic change. Every mutation goes through the state with a journal
 * attached, so the returned ChangeSet is exactly what a full walk before vs. after shows.
 */
import { ChangeJournal, type ChangeSet } from "./changes.js";
import { dayNum, firstOfMonth, isoDay } from "./dates.js";
import { randomUuid } from "./ids.js";
import { CPT_CODES, DENIAL_REASONS } from "./names.js";
import { Kind, Rng, hash32 } from "./prng.js";
import { randomAddress, randomLastName, randomMember } from "./person.js";
import { money, type ClaimRec, type CoverageRec, type MemberRec } from "./records.js";
import type { SandboxState } from "./state.js";
import { CLAIM_DAYS, MEAN_HOUSEHOLD } from "./world.js";

/** The coverage a member is on now: the one in a current plan year (the last one). */
export function currentCoverage(m: MemberRec): CoverageRec | undefined {
  return m.coverages[m.coverages.length - 1];
}

class Day {
  readonly rng: Rng;
  readonly day: string;
  readonly year: number;
  private claimSeq = 0;
  constructor(
    readonly state: SandboxState,
    dayN: number,
  ) {
    this.rng = new Rng(hash32(state.world.seed, Kind.advance, dayN));
    this.day = isoDay(dayN);
    this.year = Number(this.day.slice(0, 4));
  }

  /** A random live member matching `ok`, or undefined after a bounded number of tries. */
  pickMember(ok: (m: MemberRec) => boolean, tries = 400): MemberRec | undefined {
    const { state, rng } = this;
    const added = state.members.added;
    for (let i = 0; i < tries; i++) {
      const m = added.length > 0 && rng.chance(0.1) ? added[rng.int(added.length)] : state.members.bySlot(rng.int(state.world.totalSlots));
      // Records born today (new hires) are left alone, so each change shows in the day's walk diff.
      if (m && m.createdAt.slice(0, 10) < this.day && ok(m)) return m;
    }
    return undefined;
  }

  /** Apply `edit` to a copy of each member of `m`'s household and store the ones it changed. */
  editHousehold(m: MemberRec, edit: (copy: MemberRec) => void): void {
    for (const x of this.state.householdOf(m)) {
      const copy = this.state.memberForUpdate(x.id);
      if (!copy) continue;
      edit(copy);
      this.state.putMember(copy);
    }
  }

  newHire(): void {
    const { state, rng } = this;
    const groups = state.world.current.filter((g) => g.rec.plans.length > 0);
    if (groups.length === 0) return;
    const g = rng.pick(groups);
    const plan = rng.pick(g.rec.plans);
    const start = rng.chance(0.5) ? this.day : isoDay(firstOfMonth(dayNum(this.day), 1));
    const status = start > this.day ? "pending" : "active";
    const base = {
      subscriberId: state.nextSubscriberId(),
      lastName: randomLastName(rng),
      address: randomAddress(rng),
      phone: `+1${rng.range(201, 989)}555${String(rng.int(10000)).padStart(4, "0")}`,
      year: this.year,
    };
    const coverage = { groupId: g.rec.groupId, groupPolicyId: g.rec.id, planId: plan.id, startDate: start, endDate: null, status } as const;
    const self = randomMember(rng, { ...base, relationship: "self", createdAt: state.nextCreatedAt(), coverage });
    state.insertMember(self);
    const scid = self.coverages[0]?.id ?? "";
    const dependents: ("spouse" | "child")[] = [];
    if (rng.chance(0.5)) dependents.push("spouse");
    for (let c = rng.int(3); c > 0; c--) dependents.push("child");
    for (const relationship of dependents) {
      state.insertMember(randomMember(rng, { ...base, relationship, createdAt: state.nextCreatedAt(), coverage: { ...coverage, subscriberCoverageId: scid } }));
    }
  }

  terminate(): void {
    const m = this.pickMember((x) => x.relationship === "self" && currentCoverage(x)?.status === "active");
    if (!m) return;
    const scid = currentCoverage(m)?.subscriberCoverageId;
    this.editHousehold(m, (copy) => {
      const c = currentCoverage(copy);
      if (c && c.subscriberCoverageId === scid && c.status !== "terminated") {
        c.endDate = this.day;
        c.status = "terminated";
      }
    });
  }

  reinstate(): void {
    const m = this.pickMember((x) => x.relationship === "self" && currentCoverage(x)?.status === "terminated", 2000);
    if (!m) return;
    const scid = currentCoverage(m)?.subscriberCoverageId;
    this.editHousehold(m, (copy) => {
      const c = currentCoverage(copy);
      if (c && c.subscriberCoverageId === scid && c.status === "terminated") {
        c.endDate = null;
        c.status = "active";
      }
    });
  }

  demographic(): void {
    const { rng, state } = this;
    const m = this.pickMember(() => true);
    if (!m) return;
    const copy = state.memberForUpdate(m.id);
    if (!copy) return;
    const what = rng.int(4);
    if (what === 0) copy.address = randomAddress(rng);
    else if (what === 1) copy.lastName = randomLastName(rng) === copy.lastName ? `${copy.lastName}-Reyes` : randomLastName(rng);
    else if (what === 2) copy.phone = `+1${rng.range(201, 989)}555${String(rng.int(10000)).padStart(4, "0")}`;
    else copy.email = `${copy.id.slice(0, 8)}.${rng.int(100000)}@example.org`;
    state.putMember(copy);
  }

  /** An operator-initiated plan change (the API cannot do it): the household moves to another plan of its group. */
  planChange(): void {
    const { state, rng } = this;
    const m = this.pickMember((x) => {
      const c = currentCoverage(x);
      return x.relationship === "self" && c?.status === "active" && (state.getGroup(c.groupPolicyId)?.plans.length ?? 0) > 1;
    });
    const cov = m && currentCoverage(m);
    if (!m || !cov) return;
    const others = (state.getGroup(cov.groupPolicyId)?.plans ?? []).filter((p) => p.id !== cov.planId);
    if (others.length === 0) return;
    const to = rng.pick(others).id;
    this.editHousehold(m, (copy) => {
      const c = currentCoverage(copy);
      if (c && c.subscriberCoverageId === cov.subscriberCoverageId) c.planId = to;
    });
  }

  newClaim(): void {
    const { state, rng } = this;
    // A claim is for a service already given: a coverage that starts after the day has none yet.
    const m = this.pickMember((x) => {
      const c = currentCoverage(x);
      return c?.status === "active" && c.startDate <= this.day;
    });
    const cov = m && currentCoverage(m);
    if (!m || !cov) return;
    const lag = rng.int(4);
    let from = isoDay(dayNum(this.day) - lag);
    if (from < cov.startDate) from = cov.startDate;
    const lines = Array.from({ length: rng.range(1, 3) }, () => ({ code: rng.pick(CPT_CODES), cents: rng.range(2_500, 60_000) }));
    const total = lines.reduce((a, l) => a + l.cents, 0);
    this.claimSeq++;
    const claim: ClaimRec = {
      id: randomUuid(rng),
      claimNumber: `C${this.day.replaceAll("-", "")}N${String(this.claimSeq).padStart(5, "0")}`,
      memberId: m.id,
      coverageId: cov.id,
      groupId: cov.groupId,
      planId: cov.planId,
      serviceDateFrom: from,
      serviceDateTo: from,
      claimStatus: "pending",
      claimAmount: money(total),
      allowedAmount: null,
      paidAmount: null,
      processing: { receivedDate: this.day, adjudicatedDate: null, paidDate: null, denialReason: null },
      lines: lines.map((l) => ({ code: l.code, amount: money(l.cents) })),
      createdAt: state.nextCreatedAt(),
    };
    state.insertClaim(claim);
  }

  /** Claims adjudicated pending → paid or denied: recent generated ones and earlier days' new ones. */
  adjudicate(count: number): void {
    const { state, rng } = this;
    const w = state.world;
    const candidates = new Map<string, ClaimRec>();
    for (const c of state.claims.added) if (c && c.claimStatus === "pending" && c.processing.receivedDate < this.day) candidates.set(c.id, c);
    const S = w.claimSlotsPerDay;
    if (S > 0) {
      const lo = (CLAIM_DAYS - 21) * S;
      for (let i = 0; i < count * 30 && candidates.size < count * 3; i++) {
        const c = state.claims.bySlot(lo + rng.int(21 * S));
        if (c && c.claimStatus === "pending") candidates.set(c.id, c);
      }
    }
    const list = [...candidates.values()];
    for (let n = 0; n < count && list.length > 0; n++) {
      const c = list.splice(rng.int(list.length), 1)[0] as ClaimRec;
      const total = Math.round(Number(c.claimAmount) * 100);
      const allowed = Math.round(total * (0.55 + 0.35 * rng.next()));
      const denied = rng.chance(0.15);
      state.putClaim({
        ...c,
        claimStatus: denied ? "denied" : "paid",
        allowedAmount: denied ? "0.00" : money(allowed),
        paidAmount: denied ? "0.00" : money(Math.round(allowed * 0.8)),
        processing: { ...c.processing, adjudicatedDate: this.day, paidDate: denied ? null : this.day, denialReason: denied ? rng.pick(DENIAL_REASONS) : null },
      });
    }
  }

  /** A hard deletion: a dependent, or a subscriber who has none. */
  deleteMember(): void {
    const m = this.pickMember((x) => x.relationship !== "self" || this.state.householdOf(x).length === 1);
    if (m) this.state.deleteMember(m.id);
  }

  voidClaim(): void {
    const w = this.state.world;
    for (let i = 0; i < 50 && w.totalClaimSlots > 0; i++) {
      const c = this.state.claims.bySlot(this.rng.int(w.totalClaimSlots));
      if (c) {
        this.state.deleteClaim(c.id);
        return;
      }
    }
  }

  finishOnboarding(): void {
    const pending = this.state.groups.filter((g) => g.onboardingStatus === "in_progress");
    if (pending.length === 0) return;
    const g = this.rng.pick(pending);
    this.state.putGroup({ ...g, onboardingStatus: "completed" });
  }
}

/**
 * Move the state one day forward and apply that day's changes.
 * @returns the exact change set, and the members whose full record changed (for webhooks).
 * @example const { changeSet } = advanceDay(state); changeSet.changes.coverages.updated
 */
export function advanceDay(state: SandboxState): { changeSet: ChangeSet; changedMembers: string[] } {
  const journal = new ChangeJournal();
  const listener = state.onMemberChanged;
  state.today += 1;
  state.observer = journal;
  state.onMemberChanged = undefined;
  try {
    const day = new Day(state, state.today);
    const w = state.world;
    const people = w.households * MEAN_HOUSEHOLD;
    const times = (n: number, f: () => void): void => {
      for (let i = 0; i < n; i++) f();
    };
    times(Math.max(1, Math.round(people * 0.0004)), () => day.newHire());
    times(Math.max(1, Math.round(people * 0.0003)), () => day.terminate());
    day.reinstate();
    times(Math.max(2, Math.round(people * 0.0005)), () => day.demographic());
    day.planChange();
    const newClaims = w.totalClaimSlots > 0 ? Math.max(3, Math.round((people * w.claimsPerMember) / CLAIM_DAYS)) : 0;
    day.adjudicate(Math.max(2, Math.round(newClaims * 0.8)));
    times(newClaims, () => day.newClaim());
    times(Math.max(1, Math.round(people * 0.0001)), () => day.deleteMember());
    day.voidClaim();
    day.finishOnboarding();
    return journal.finish(state, day.day);
  } finally {
    state.observer = undefined;
    state.onMemberChanged = listener;
  }
}

/**
 * The model of the service: a few designs, 2-4 groups with plans, 10-40 members (some covered in
 * two groups, so two groups' member walks list them), claims in and around the claims window.
 * Day operations change it (chosen by fast-check as abstract operations whose `a`/`b`/`c` pick
 * the records they touch, so that shrinking keeps them meaningful). Every record's presence is
 * kept per tick (one tick per operation), to tell whether the service had a record during the
 * whole of a run; every SSN ever generated is kept, to look for it where it must never be.
 */
import { addPhiKeys, changeOnePhiKey, ssnInText } from "./phi-keys.js";
import { Rng } from "./rng.js";

export const ListResources = ["designs", "groups", "members", "claims"] as const;
export type ListResource = (typeof ListResources)[number];
export type TrackedResource = "designs" | "groups" | "plans" | "members" | "coverages" | "claims";

/** The claims window every run walks (fixed per schedule: claim dates move in and out of it). */
export const WINDOW = { from: "2026-02-01", to: "2026-03-31" } as const;

export interface Design {
  id: string;
  name: string;
  planType: string;
  configuration: { deductible: string; coinsurance: number };
  createdAt: string;
}
export interface Plan {
  id: string;
  name: string;
  basePlanDesignId: string;
  benefitBundleId: string;
  vendorId: string;
}
export interface Group {
  id: string;
  groupId: string;
  sponsorId: string;
  sponsorName: string;
  ein: string;
  adminEmail: string;
  effectiveDate: string;
  terminationDate: string | null;
  onboardingStatus: string;
  createdAt: string;
  plans: Plan[];
}
export interface Coverage {
  id: string;
  groupId: string;
  groupPolicyId: string;
  planId: string | null;
  subscriberCoverageId: string;
  startDate: string;
  endDate: string | null;
  status: "active" | "terminated" | "pending";
}
export interface Member {
  id: string;
  subscriberId: string;
  firstName: string;
  lastName: string;
  dateOfBirth: string;
  ssn: string;
  gender: string;
  memberType: string;
  relationship: string;
  email: string;
  phone: string;
  address: { line1: string; line2: string | null; city: string; state: string; zip: string };
  createdAt: string;
  coverages: Coverage[];
}
export interface Claim {
  id: string;
  claimNumber: string;
  memberId: string;
  coverageId: string;
  groupId: string;
  planId: string | null;
  serviceDateFrom: string;
  serviceDateTo: string;
  claimStatus: string;
  claimAmount: string;
  allowedAmount: string;
  paidAmount: string;
  processing: { receivedDate: string; adjudicatedDate: string | null; paidDate: string | null; denialReason: string | null };
  lines: { code: string; amount: string }[];
  createdAt: string;
}

export const OpKinds = [
  "designUpdate",
  "groupUpdate",
  "groupAdd",
  "groupDelete",
  "planAdd",
  "planRemove",
  "planUpdate",
  "plansRemoveAll",
  "memberInsert",
  "memberUpdate",
  "memberDelete",
  "memberDeleteMany",
  "memberReinstate",
  "coverageAdd",
  "coverageTerminate",
  "coverageRemove",
  "coverageMove",
  "coverageRemoveMany",
  "claimInsert",
  "claimUpdate",
  "claimDelete",
  "claimDeleteMany",
  "claimMoveDate",
  "pageSize",
  "keyOrder",
] as const;
export type OpKind = (typeof OpKinds)[number];

/** One change of the service; `a`, `b`, `c` pick what it touches (modulo what exists). */
export interface Op {
  readonly kind: OpKind;
  readonly a: number;
  readonly b: number;
  readonly c: number;
}

export interface ModelInit {
  readonly designs: number;
  readonly groups: number;
  readonly members: number;
  readonly claims: number;
  /** Percentage of members with a second coverage in another group. */
  readonly twoGroupPct: number;
  readonly pageSizes: Readonly<Record<ListResource, number>>;
}

const FIRST = ["Ana", "Zoë", "José", "李", "Chloé", "Mateo", "Aoife", "Olu", "Priya", "Sven", "Hana", "Luca"];
const LAST = ["Nguyễn", "O'Brien", "García", "Kowalski", "Okafor", "Smith", "Müller", "Tanaka", "Silva", "Haddad"];
const CITIES = ["Austin", "Boston", "Denver", "Fresno", "Gary", "Reno"];
const SPONSORS = ["Acme", "Zeta Corp", "Globex", "Initech", "Umbrella", "Hooli"];
const CODES = ["99213", "99214", "80053", "36415", "93000"];

export class ServiceModel {
  /** One tick per operation applied. */
  tick = 0;
  readonly designs: Design[] = [];
  readonly groups: Group[] = [];
  readonly members = new Map<string, Member>();
  readonly claims = new Map<string, Claim>();
  /** Deleted members, by id, as they were: a reinstatement brings one back. */
  private readonly deletedMembers = new Map<string, Member>();
  /** Every id ever listed per resource, with its createdAt: cursors of deleted records still place. */
  readonly createdAt: Record<ListResource, Map<string, string>> = {
    designs: new Map(),
    groups: new Map(),
    members: new Map(),
    claims: new Map(),
  };
  /** The last version of every claim there ever was (deleted ones too). */
  readonly lastClaim = new Map<string, Claim>();
  /** Presence intervals `[from, to)` in ticks, per `resource:id`. */
  private readonly presence = new Map<string, [number, number | null][]>();
  /** Every SSN ever generated, as generated (dashed, or undashed for a few). */
  readonly ssns: string[] = [];
  private readonly ssnSet = new Set<string>();
  readonly pageSize: Record<ListResource, number>;
  /** Serialise a resource's items with their keys reversed (the text changes, the record does not). */
  readonly reversedKeys: Record<ListResource, boolean> = { designs: false, groups: false, members: false, claims: false };
  private seq = 0;
  private groupSeq = 0;
  /** A short trace of the operations applied (ids only), for failure reports. */
  readonly trace: string[] = [];

  constructor(
    private readonly rng: Rng,
    init: ModelInit,
    /** The stream of the SSN fields in other styles (phi-keys.ts); without it, members carry `ssn` only. */
    private readonly phi?: Rng,
  ) {
    this.pageSize = { ...init.pageSizes };
    for (let i = 0; i < init.designs; i++) this.designs.push(this.newDesign());
    for (let i = 0; i < init.groups; i++) this.addGroup(this.rng.int(4));
    for (let i = 0; i < init.members; i++) {
      const m = this.newMember(this.rng.int(100) < init.twoGroupPct ? 2 : 1);
      this.insertMember(m);
    }
    for (let i = 0; i < init.claims; i++) this.insertClaim();
  }

  // ---- presence ------------------------------------------------------------------------------

  private born(r: TrackedResource, id: string): void {
    const key = `${r}:${id}`;
    const list = this.presence.get(key) ?? [];
    const last = list[list.length - 1];
    if (last && last[1] === null) return;
    list.push([this.tick, null]);
    this.presence.set(key, list);
  }

  private died(r: TrackedResource, id: string): void {
    const last = this.presence.get(`${r}:${id}`)?.at(-1);
    if (last && last[1] === null) last[1] = this.tick;
  }

  /** Whether the service had the record at every tick from `from` to `to` (inclusive). */
  presentThroughout(r: TrackedResource, id: string, from: number, to: number): boolean {
    return (this.presence.get(`${r}:${id}`) ?? []).some(([s, e]) => s <= from && (e === null || e > to));
  }

  // ---- generation ----------------------------------------------------------------------------

  private stamp(): string {
    // 2025-11-01 plus one second per record created: createdAt grows with creation order.
    return new Date(Date.UTC(2025, 10, 1) + this.seq++ * 1000).toISOString();
  }

  private newSsn(rng: Rng = this.rng): string {
    for (;;) {
      let area = rng.between(100, 899);
      if (area === 666) area = 667;
      const s = `${area}-${String(rng.between(1, 99)).padStart(2, "0")}-${String(rng.between(1, 9999)).padStart(4, "0")}`;
      if (this.ssnSet.has(s)) continue;
      this.ssnSet.add(s);
      // The service's format is dashed; a few records carry the digits alone.
      const stored = rng.chance(0.1) ? s.replace(/-/g, "") : s;
      this.ssns.push(s);
      return stored;
    }
  }

  private newDesign(): Design {
    const d: Design = {
      id: `dsn-${this.rng.hex(8)}`,
      name: `${this.rng.pick(["Gold", "Silver", "Bronze", "Platinum"])} ${this.rng.between(1, 9)}`,
      planType: this.rng.pick(["PPO", "HMO", "HDHP", "EPO"]),
      configuration: { deductible: `${this.rng.between(1, 40) * 50}.00`, coinsurance: this.rng.pick([10, 20, 30]) },
      createdAt: this.stamp(),
    };
    this.createdAt.designs.set(d.id, d.createdAt);
    this.born("designs", d.id);
    return d;
  }

  private newPlan(): Plan {
    const p: Plan = {
      id: this.rng.uuid(),
      name: `${this.rng.pick(["Gold", "Silver", "Bronze"])} ${this.rng.pick(["PPO", "HMO"])}`,
      basePlanDesignId: this.designs.length ? this.rng.pick(this.designs).id : "dsn-none",
      benefitBundleId: `bb-${this.rng.hex(6)}`,
      vendorId: `v-${this.rng.hex(4)}`,
    };
    this.born("plans", p.id);
    return p;
  }

  private addGroup(plans: number): Group {
    const g: Group = {
      id: this.rng.uuid(),
      groupId: `G${1001 + this.groupSeq++}`,
      sponsorId: `S${this.rng.hex(6)}`,
      sponsorName: this.rng.pick(SPONSORS),
      ein: `${this.rng.between(10, 99)}-${this.rng.between(1000000, 9999999)}`,
      adminEmail: `admin${this.rng.int(100)}@example.com`,
      effectiveDate: "2025-01-01",
      terminationDate: null,
      onboardingStatus: "active",
      createdAt: this.stamp(),
      plans: [],
    };
    for (let i = 0; i < plans; i++) g.plans.push(this.newPlan());
    this.groups.push(g);
    this.createdAt.groups.set(g.id, g.createdAt);
    this.born("groups", g.id);
    return g;
  }

  private newCoverage(g: Group): Coverage {
    const c: Coverage = {
      id: this.rng.uuid(),
      groupId: g.groupId,
      groupPolicyId: g.id,
      planId: g.plans.length ? this.rng.pick(g.plans).id : null,
      subscriberCoverageId: `sc-${this.rng.hex(8)}`,
      startDate: this.rng.pick(["2025-01-01", "2025-07-01", "2026-01-01"]),
      endDate: null,
      status: this.rng.chance(0.9) ? "active" : "pending",
    };
    return c;
  }

  private newMember(coverages: number): Member {
    const groups = [...this.groups];
    const covs: Coverage[] = [];
    for (let i = 0; i < coverages && groups.length; i++) {
      const g = groups.splice(this.rng.int(groups.length), 1)[0]!;
      covs.push(this.newCoverage(g));
    }
    const first = this.rng.pick(FIRST);
    return this.withPhiKeys({
      id: this.rng.uuid(),
      subscriberId: `SUB${this.rng.between(100000, 999999)}`,
      firstName: first,
      lastName: this.rng.pick(LAST),
      dateOfBirth: `${this.rng.between(1950, 2020)}-${String(this.rng.between(1, 12)).padStart(2, "0")}-${String(this.rng.between(1, 28)).padStart(2, "0")}`,
      ssn: this.newSsn(),
      gender: this.rng.pick(["F", "M", "X"]),
      memberType: this.rng.pick(["subscriber", "dependent"]),
      relationship: this.rng.pick(["self", "spouse", "child"]),
      email: `${first.toLowerCase()}${this.rng.int(1000)}@example.com`,
      phone: `555-01${this.rng.between(10, 99)}`,
      address: { line1: `${this.rng.between(1, 999)} Main St`, line2: this.rng.chance(0.3) ? "Apt 2" : null, city: this.rng.pick(CITIES), state: "TX", zip: `7${this.rng.between(1000, 9999)}` },
      createdAt: this.stamp(),
      coverages: covs,
    });
  }

  /** Half the members also carry SSN fields in other styles, at random depths, some in a coverage. */
  private withPhiKeys(m: Member): Member {
    const phi = this.phi;
    if (!phi || !phi.chance(0.5)) return m;
    addPhiKeys(m, phi, () => this.newSsn(phi));
    if (m.coverages[0] && phi.chance(0.3)) addPhiKeys(m.coverages[0], phi, () => this.newSsn(phi));
    return m;
  }

  private insertMember(m: Member): void {
    this.members.set(m.id, m);
    if (!this.createdAt.members.has(m.id)) this.createdAt.members.set(m.id, m.createdAt);
    this.born("members", m.id);
    for (const c of m.coverages) this.born("coverages", c.id);
  }

  private claimDate(inWindow: boolean): string {
    if (inWindow) return addDays(WINDOW.from, this.rng.int(59)); // Feb 1 .. Mar 31
    return this.rng.chance(0.5) ? addDays("2026-01-01", this.rng.int(31)) : addDays("2026-04-01", this.rng.int(30));
  }

  private insertClaim(): Claim | undefined {
    const members = [...this.members.values()].filter((m) => m.coverages.length > 0);
    if (members.length === 0) return undefined;
    const m = this.rng.pick(members);
    const cov = this.rng.pick(m.coverages);
    const from = this.claimDate(this.rng.chance(0.75));
    const amount = `${this.rng.between(20, 4000)}.${this.rng.pick(["00", "50", "25"])}`;
    const c: Claim = {
      id: this.rng.uuid(),
      claimNumber: `CLM${this.rng.between(1000000, 9999999)}`,
      memberId: m.id,
      coverageId: cov.id,
      groupId: cov.groupId,
      planId: cov.planId,
      serviceDateFrom: from,
      serviceDateTo: addDays(from, this.rng.int(3)),
      claimStatus: this.rng.pick(["pending", "adjudicated", "paid", "denied"]),
      claimAmount: amount,
      allowedAmount: amount,
      paidAmount: "0.00",
      processing: { receivedDate: addDays(from, 2), adjudicatedDate: null, paidDate: null, denialReason: null },
      lines: [{ code: this.rng.pick(CODES), amount }],
      createdAt: this.stamp(),
    };
    // Free text holding an SSN (a processor's note), drawn on the SSN fields' own stream.
    if (this.phi?.chance(0.15)) c.processing.denialReason = ssnInText(this.phi, this.newSsn(this.phi));
    this.claims.set(c.id, c);
    this.lastClaim.set(c.id, structuredClone(c));
    this.createdAt.claims.set(c.id, c.createdAt);
    this.born("claims", c.id);
    return c;
  }

  // ---- operations ----------------------------------------------------------------------------

  private nth<T>(items: readonly T[], k: number): T | undefined {
    return items.length ? items[k % items.length] : undefined;
  }

  private liveMembers(): Member[] {
    return [...this.members.values()];
  }

  /** Members listed under a group, in walk order. */
  membersOfGroup(groupNumber: string): Member[] {
    return sortByCreated(this.liveMembers().filter((m) => m.coverages.some((c) => c.groupId === groupNumber)));
  }

  private coverageIdsInUse(): Set<string> {
    return new Set(this.liveMembers().flatMap((m) => m.coverages.map((c) => c.id)));
  }

  private deleteMember(m: Member): void {
    this.members.delete(m.id);
    this.deletedMembers.set(m.id, structuredClone(m));
    this.died("members", m.id);
    for (const c of m.coverages) this.died("coverages", c.id);
  }

  private touchClaim(c: Claim): void {
    this.lastClaim.set(c.id, structuredClone(c));
  }

  /** Apply one operation; returns a line for the trace (ids only, never PII). */
  apply(op: Op): string {
    this.tick++;
    const line = `t${this.tick} ${op.kind}: ${this.applyOp(op)}`;
    this.trace.push(line);
    return line;
  }

  private applyOp(op: Op): string {
    const { a, b, c } = op;
    switch (op.kind) {
      case "designUpdate": {
        const d = this.nth(this.designs, a);
        if (!d) return "noop";
        if (b % 2) d.name = `${d.name.split(" ")[0]} ${1 + (c % 9)}`;
        else d.configuration = { ...d.configuration, deductible: `${1 + (c % 40)}50.00` };
        return d.id;
      }
      case "groupUpdate": {
        const g = this.nth(this.groups, a);
        if (!g) return "noop";
        if (b % 3 === 0) g.sponsorName = SPONSORS[c % SPONSORS.length]!;
        else if (b % 3 === 1) g.onboardingStatus = ["active", "pending", "complete"][c % 3]!;
        else g.adminEmail = `admin${c % 1000}@example.org`;
        return g.id;
      }
      case "groupAdd": {
        if (this.groups.length >= 5) return "noop";
        return this.addGroup(a % 3).id;
      }
      case "groupDelete": {
        // Only a group nobody is covered in and no live claim names: the service would refuse others.
        const free = this.groups.filter(
          (g) => !this.liveMembers().some((m) => m.coverages.some((x) => x.groupId === g.groupId)) && ![...this.claims.values()].some((x) => x.groupId === g.groupId),
        );
        const g = this.nth(free, a);
        if (!g || this.groups.length <= 2) return "noop";
        this.groups.splice(this.groups.indexOf(g), 1);
        this.died("groups", g.id);
        for (const p of g.plans) this.died("plans", p.id);
        return g.id;
      }
      case "planAdd": {
        const g = this.nth(this.groups, a);
        if (!g || g.plans.length >= 4) return "noop";
        const p = this.newPlan();
        g.plans.push(p);
        return `${g.id} +${p.id}`;
      }
      case "planRemove": {
        const g = this.nth(this.groups.filter((x) => x.plans.length), a);
        if (!g) return "noop";
        const p = g.plans.splice(b % g.plans.length, 1)[0]!;
        this.died("plans", p.id);
        return `${g.id} -${p.id}`;
      }
      case "planUpdate": {
        const plans = this.groups.flatMap((g) => g.plans);
        const p = this.nth(plans, a);
        if (!p) return "noop";
        if (b % 2) p.name = `${["Gold", "Silver", "Bronze"][c % 3]} ${["PPO", "HMO", "EPO"][(c >> 2) % 3]}`;
        else p.vendorId = `v-${(c % 65536).toString(16)}`;
        return p.id;
      }
      case "plansRemoveAll": {
        // Every plan of one group or more: what a broken listing looks like, or a real reorganisation.
        const withPlans = this.groups.filter((x) => x.plans.length);
        if (!withPlans.length) return "noop";
        const n = 1 + (b % withPlans.length);
        const out: string[] = [];
        for (let i = 0; i < n; i++) {
          const g = withPlans[(a + i) % withPlans.length]!;
          for (const p of g.plans) this.died("plans", p.id);
          out.push(`${g.id} -${g.plans.length}`);
          g.plans = [];
        }
        return out.join(" ");
      }
      case "memberInsert": {
        if (this.members.size >= 60) return "noop";
        const m = this.newMember(1 + (b % 4 === 0 ? 1 : 0));
        if (m.coverages.length === 0) return "noop";
        this.insertMember(m);
        return m.id;
      }
      case "memberUpdate": {
        const m = this.nth(this.liveMembers(), a);
        if (!m) return "noop";
        switch (b % 6) {
          case 0:
            m.lastName = LAST[c % LAST.length]!;
            break;
          case 1:
            m.address = { ...m.address, city: CITIES[c % CITIES.length]! };
            break;
          case 2:
            m.phone = `555-02${10 + (c % 90)}`;
            break;
          case 3:
            m.email = `${m.firstName.toLowerCase()}.${c % 1000}@example.net`;
            break;
          case 4:
            m.ssn = this.newSsn(); // a corrected SSN
            if (this.phi?.chance(0.5)) changeOnePhiKey(m, () => this.newSsn(this.phi)); // and a dependent's
            break;
          default:
            m.address = { ...m.address, line2: m.address.line2 === null ? `Unit ${c % 50}` : null };
        }
        return m.id;
      }
      case "memberDelete": {
        const m = this.nth(this.liveMembers(), a);
        if (!m || this.members.size <= 3) return "noop";
        this.deleteMember(m);
        return m.id;
      }
      case "memberDeleteMany": {
        const n = 3 + (b % 4);
        const out: string[] = [];
        for (let i = 0; i < n && this.members.size > 3; i++) {
          const m = this.nth(this.liveMembers(), a + i * 7)!;
          this.deleteMember(m);
          out.push(m.id);
        }
        return out.join(" ");
      }
      case "memberReinstate": {
        const m = this.nth([...this.deletedMembers.values()], a);
        if (!m) return "noop";
        this.deletedMembers.delete(m.id);
        // Its coverages come back, unless another member holds one now.
        const inUse = this.coverageIdsInUse();
        const groups = new Set(this.groups.map((g) => g.groupId));
        m.coverages = m.coverages.filter((x) => !inUse.has(x.id) && groups.has(x.groupId));
        if (m.coverages.length === 0) m.coverages = [this.newCoverage(this.nth(this.groups, b)!)];
        this.insertMember(m);
        return m.id;
      }
      case "coverageAdd": {
        const m = this.nth(this.liveMembers(), a);
        const g = this.nth(this.groups, b);
        if (!m || !g || m.coverages.length >= 3) return "noop";
        const cov = this.newCoverage(g);
        m.coverages.push(cov);
        this.born("coverages", cov.id);
        return `${m.id} +${cov.id} in ${g.groupId}`;
      }
      case "coverageTerminate": {
        const covs = this.liveMembers().flatMap((m) => m.coverages.filter((x) => x.status !== "terminated"));
        const cov = this.nth(covs, a);
        if (!cov) return "noop";
        cov.status = "terminated";
        cov.endDate = addDays("2026-01-31", b % 60);
        return cov.id;
      }
      case "coverageRemove": {
        // A member keeps one coverage at least: one with none is listed under no group, so no
        // walk could ever see it (the fan-out by group is the only way members are read).
        const m = this.nth(this.liveMembers().filter((x) => x.coverages.length >= 2), a);
        if (!m) return "noop";
        const cov = m.coverages.splice(b % m.coverages.length, 1)[0]!;
        this.died("coverages", cov.id);
        return `${m.id} -${cov.id}`;
      }
      case "coverageMove": {
        // The same coverage id moves to another member; often a neighbour on the same page.
        const from = this.nth(this.liveMembers().filter((x) => x.coverages.length >= 2), a);
        if (!from) return "noop";
        const cov = from.coverages[b % from.coverages.length]!;
        let to: Member | undefined;
        if (c % 3 !== 0) {
          const listing = this.membersOfGroup(cov.groupId);
          const i = listing.findIndex((x) => x.id === from.id);
          to = listing[i + 1] ?? listing[i - 1];
        }
        to ??= this.nth(this.liveMembers().filter((x) => x.id !== from.id), c);
        if (!to || to.id === from.id || to.coverages.length >= 3) return "noop";
        from.coverages.splice(from.coverages.indexOf(cov), 1);
        to.coverages.push(cov);
        return `${cov.id} ${from.id} -> ${to.id}`;
      }
      case "coverageRemoveMany": {
        const out: string[] = [];
        const n = 3 + (b % 4);
        for (let i = 0; i < n; i++) {
          const m = this.nth(this.liveMembers().filter((x) => x.coverages.length >= 2), a + i * 3);
          if (!m) break;
          const cov = m.coverages.splice((c + i) % m.coverages.length, 1)[0]!;
          this.died("coverages", cov.id);
          out.push(cov.id);
        }
        return out.length ? out.join(" ") : "noop";
      }
      case "claimInsert":
        return this.insertClaim()?.id ?? "noop";
      case "claimUpdate": {
        const cl = this.nth([...this.claims.values()], a);
        if (!cl) return "noop";
        if (b % 3 === 0) {
          cl.claimStatus = "paid";
          cl.paidAmount = cl.allowedAmount;
          cl.processing = { ...cl.processing, adjudicatedDate: addDays(cl.serviceDateFrom, 5), paidDate: addDays(cl.serviceDateFrom, 9) };
        } else if (b % 3 === 1) {
          cl.claimStatus = "denied";
          const phi = this.phi?.chance(0.3) ? this.phi : undefined; // sometimes a reason that quotes an SSN
          cl.processing = { ...cl.processing, denialReason: phi ? ssnInText(phi, this.newSsn(phi)) : ["not covered", "duplicate", "expired"][c % 3]! };
        } else {
          cl.lines = [...cl.lines, { code: CODES[c % CODES.length]!, amount: "10.00" }];
        }
        this.touchClaim(cl);
        return cl.id;
      }
      case "claimDelete": {
        const cl = this.nth([...this.claims.values()], a);
        if (!cl) return "noop";
        this.claims.delete(cl.id);
        this.died("claims", cl.id);
        return cl.id;
      }
      case "claimDeleteMany": {
        const n = 3 + (b % 4);
        const out: string[] = [];
        for (let i = 0; i < n && this.claims.size > 0; i++) {
          const cl = this.nth([...this.claims.values()], a + i * 5)!;
          this.claims.delete(cl.id);
          this.died("claims", cl.id);
          out.push(cl.id);
        }
        return out.join(" ");
      }
      case "claimMoveDate": {
        const cl = this.nth([...this.claims.values()], a);
        if (!cl) return "noop";
        const inWindow = b % 2 === 0;
        const from = inWindow ? addDays(WINDOW.from, c % 59) : c % 2 ? addDays("2026-01-01", c % 31) : addDays("2026-04-01", c % 30);
        cl.serviceDateFrom = from;
        cl.serviceDateTo = addDays(from, c % 3);
        this.touchClaim(cl);
        return `${cl.id} -> ${from}`;
      }
      case "pageSize": {
        const r = ListResources[a % 4]!;
        this.pageSize[r] = r === "designs" || r === "groups" ? 1 + (b % 4) : 2 + (b % 7);
        return `${r}=${this.pageSize[r]}`;
      }
      case "keyOrder": {
        const r = ListResources[a % 4]!;
        this.reversedKeys[r] = !this.reversedKeys[r];
        return r;
      }
    }
  }

  // ---- listings ------------------------------------------------------------------------------

  /** The items a list endpoint filters and orders (createdAt, then id), before the cursor. */
  listing(resource: ListResource, filters: Record<string, string | undefined>): { id: string; createdAt: string; item: unknown }[] {
    switch (resource) {
      case "designs":
        return sortByCreated(this.designs).map((d) => ({ id: d.id, createdAt: d.createdAt, item: d }));
      case "groups":
        return sortByCreated(this.groups).map((g) => ({ id: g.id, createdAt: g.createdAt, item: g }));
      case "members": {
        const g = filters.groupId;
        const ms = g ? this.membersOfGroup(g) : sortByCreated(this.liveMembers());
        return ms.map((m) => ({ id: m.id, createdAt: m.createdAt, item: m }));
      }
      case "claims": {
        const f = filters;
        const cs = [...this.claims.values()].filter(
          (x) =>
            (!f.groupId || x.groupId === f.groupId) &&
            (!f.memberId || x.memberId === f.memberId) &&
            (!f.serviceDateFrom || x.serviceDateFrom >= f.serviceDateFrom) &&
            (!f.serviceDateTo || x.serviceDateFrom <= f.serviceDateTo),
        );
        return sortByCreated(cs).map((x) => ({ id: x.id, createdAt: x.createdAt, item: x }));
      }
    }
  }

  /** A live member, for a malformed body that carries real PHI. */
  someMembers(n: number, k: number): Member[] {
    const ms = this.liveMembers();
    return Array.from({ length: Math.min(n, ms.length) }, (_, i) => ms[(k + i) % ms.length]!);
  }

  /** Upper bound of the requests a clean walk needs (the runaway check is a multiple of it). */
  walkSize(): number {
    const twoGroups = this.liveMembers().reduce((n, m) => n + new Set(m.coverages.map((c) => c.groupId)).size, 0);
    return this.designs.length + this.groups.length + twoGroups + this.claims.size + 2 + 2 * this.groups.length;
  }
}

function sortByCreated<T extends { createdAt: string; id: string }>(items: readonly T[]): T[] {
  return [...items].sort((x, y) => (x.createdAt < y.createdAt ? -1 : x.createdAt > y.createdAt ? 1 : x.id < y.id ? -1 : x.id > y.id ? 1 : 0));
}

export function addDays(iso: string, n: number): string {
  return new Date(Date.parse(`${iso}T00:00:00Z`) + n * 86_400_000).toISOString().slice(0, 10);
}

/**
 * The generated universe's skeleton: the small catalog (designs, vendors, bundles, sponsors, groups,
 * plans) is built eagerly; members and claims are only laid out (household ranges per group, claim
 * slots per day) so each can be derived from its index on demand, in bounded memory.
 */
import { addYears, dayNum, dayStartMs, firstOfMonth, isoDay, isoTime } from "./dates.js";
import { shortId } from "./ids.js";
import { COMPANY_A, COMPANY_B, COMPANY_C, emailSafe } from "./names.js";
import { Kind, Rng, hash32, rngFor, seedToInt } from "./prng.js";
import type { BundleRec, DesignRec, GroupRec, PlanRec, VendorRec } from "./records.js";

/** Member slots per household: subscriber, spouse or child, and up to three more children. */
export const SLOTS_PER_HOUSEHOLD = 5;
/** Mean household size of the size distribution in generate-member.ts. */
export const MEAN_HOUSEHOLD = 2.18;
/** Days of claim history before the genesis day. */
export const CLAIM_DAYS = 180;
/** A claim slot holds a claim with this probability (before coverage checks). */
export const CLAIM_SLOT_FILL = 0.5;

export interface GroupInfo {
  readonly rec: GroupRec;
  readonly kind: "current" | "prior";
  /** Household range [hhStart, hhEnd): for a prior group, the range of the current group it renewed into. */
  readonly hhStart: number;
  readonly hhEnd: number;
  readonly effDay: number;
  readonly endDay: number;
  /** For a current group: its prior-year group, if the sponsor renewed. */
  prior?: GroupInfo;
  /** For a prior group: the current group it renewed into. */
  renewedInto?: GroupInfo;
  /** Claim slots per day and their offset within a day (current groups only). */
  claimSlots: number;
  claimOffset: number;
  /** Index among current groups. */
  ordinal: number;
}

export interface WorldOptions {
  seed: number | string;
  members: number;
  groups: number;
  claimsPerMember: number;
  today: string;
  /** The fraction of members that also carry SSN fields named in other styles (ssn-variants.ts). */
  extraSsnKeys?: number;
}

export interface World {
  readonly seed: number;
  readonly genesisDay: number;
  readonly claimsPerMember: number;
  readonly extraSsnKeys: number;
  readonly households: number;
  readonly totalSlots: number;
  readonly designs: readonly DesignRec[];
  readonly vendors: readonly VendorRec[];
  readonly bundles: readonly BundleRec[];
  /** Every generated group, in createdAt order. */
  readonly groups: readonly GroupInfo[];
  /** Current groups in household order (contiguous ranges). */
  readonly current: readonly GroupInfo[];
  readonly renewProb: number;
  readonly memberBaseMs: number;
  readonly memberStepMs: number;
  /** Claim layout: slot index = day * claimSlotsPerDay + group.claimOffset + k. */
  readonly claimFirstDay: number;
  readonly claimSlotsPerDay: number;
  readonly claimStepMs: number;
  readonly totalClaimSlots: number;
}

const DESIGNS: readonly (readonly [string, string, number, number, string])[] = [
  ["Gold PPO 500", "PPO", 50000, 300000, "0.10"],
  ["Silver PPO 1500", "PPO", 150000, 600000, "0.20"],
  ["Bronze HDHP 3000", "HDHP", 300000, 750000, "0.30"],
  ["HSA Qualified HDHP 2800", "HDHP", 280000, 700000, "0.20"],
  ["Platinum HMO 250", "HMO", 25000, 200000, "0.00"],
  ["Select EPO 1000", "EPO", 100000, 500000, "0.15"],
  ["Dental Basic", "DENTAL", 5000, 150000, "0.20"],
  ["Vision Plus", "VISION", 0, 0, "0.00"],
];
const VENDOR_ROLES = ["broker", "pbm", "stop_loss", "tpa", "network", "broker"] as const;
const VENDOR_NAMES = ["Brightline Brokerage", "CareRx PBM", "Atlas Stop Loss", "Unity TPA", "Prairie Health Network", "Coastal Benefits Advisors"] as const;
const BUNDLES = ["Core Medical", "Medical + Rx", "Medical + Rx + Dental", "Full Suite", "Telehealth First"] as const;

function money(cents: number): string {
  return `${Math.floor(cents / 100)}.${String(cents % 100).padStart(2, "0")}`;
}

/** Build the world for the given options. Cost is O(groups), not O(members). */
export function buildWorld(o: WorldOptions): World {
  const seed = seedToInt(o.seed);
  const genesisDay = dayNum(o.today);
  const households = Math.max(1, Math.ceil(o.members / MEAN_HOUSEHOLD));
  const totalGroups = Math.max(2, Math.floor(o.groups));
  const priorCount = Math.max(1, Math.floor(totalGroups / 4));
  const currentCount = Math.max(1, totalGroups - priorCount);
  const cat = new Rng(hash32(seed, Kind.catalog, 1));

  const vendors: VendorRec[] = VENDOR_NAMES.map((name, i) => ({ id: shortId("vnd", seed, Kind.catalog, 100 + i), name, role: VENDOR_ROLES[i] ?? "broker" }));
  const bundles: BundleRec[] = BUNDLES.map((name, i) => ({ id: shortId("bb", seed, Kind.catalog, 200 + i), name }));
  const designs: DesignRec[] = DESIGNS.map(([name, planType, ded, oop, coins], i) => ({
    id: shortId("pd", seed, Kind.catalog, 300 + i),
    name,
    planType,
    configuration: {
      deductible: money(ded),
      outOfPocketMax: money(oop),
      coinsurance: coins,
      network: planType === "HMO" || planType === "EPO" ? "narrow" : "broad",
      // Where a client finds valid ids for POST /v2/groups: the spec lists no endpoint for them.
      vendorIds: vendors.map((v) => v.id),
      benefitBundleIds: bundles.map((b) => b.id),
    },
    createdAt: isoTime(dayStartMs(genesisDay - 1500) + i * 60_000),
  }));

  // Household ranges: weighted, contiguous, every group non-empty while households allow.
  const weights = Array.from({ length: currentCount }, () => 0.4 + cat.next() * 1.2);
  const wsum = weights.reduce((a, b) => a + b, 0);
  const starts: number[] = [];
  let acc = 0;
  for (let g = 0; g < currentCount; g++) {
    starts.push(Math.min(households, Math.round((acc / wsum) * households)));
    acc += weights[g] ?? 1;
  }
  if (households >= currentCount) for (let g = 1; g < currentCount; g++) starts[g] = Math.max(starts[g] ?? 0, (starts[g - 1] ?? 0) + 1);

  const makePlans = (gi: number, year: number, rng: Rng): PlanRec[] => {
    const n = 1 + rng.int(3);
    const used = new Set<number>();
    const plans: PlanRec[] = [];
    for (let p = 0; p < n; p++) {
      let d = rng.int(6);
      while (used.has(d)) d = (d + 1) % 6;
      used.add(d);
      const design = designs[d] as DesignRec;
      plans.push({
        id: shortId("pln", seed, Kind.catalog, 10_000 + gi * 8 + p),
        name: `${design.name} ${year}`,
        basePlanDesignId: design.id,
        benefitBundleId: rng.pick(bundles).id,
        vendorId: rng.pick(vendors).id,
      });
    }
    return plans;
  };

  const current: GroupInfo[] = [];
  const all: GroupInfo[] = [];
  for (let g = 0; g < currentCount; g++) {
    const rng = rngFor(seed, Kind.catalog, 1000 + g);
    const company = `${rng.pick(COMPANY_A)} ${rng.pick(COMPANY_B)} ${rng.pick(COMPANY_C)}`;
    const effDay = firstOfMonth(genesisDay, -rng.int(12));
    const endDay = addYears(effDay, 1) - 1;
    const einNum = 100_000_000 + g * 7919 + rng.int(7919);
    const ein = `${String(einNum).slice(0, 2)}-${String(einNum).slice(2)}`;
    const sponsorId = shortId("sp", seed, Kind.catalog, 5000 + g);
    const slug = emailSafe(company.split(" ")[0] ?? "co");
    const rec: GroupRec = {
      id: shortId("gp", seed, Kind.catalog, 20_000 + g),
      groupId: String(200_000 + g),
      sponsorId,
      sponsorName: company,
      ein,
      adminEmail: `hr@${slug}${g}.example.com`,
      effectiveDate: isoDay(effDay),
      terminationDate: isoDay(endDay),
      onboardingStatus: rng.chance(0.1) ? "in_progress" : "completed",
      createdAt: isoTime(dayStartMs(effDay - 45) + g * 1000 + 1),
      plans: makePlans(g, Number(isoDay(effDay).slice(0, 4)), rng),
    };
    const info: GroupInfo = {
      rec,
      kind: "current",
      hhStart: starts[g] ?? 0,
      hhEnd: g + 1 < currentCount ? (starts[g + 1] ?? households) : households,
      effDay,
      endDay,
      claimSlots: 0,
      claimOffset: 0,
      ordinal: g,
    };
    current.push(info);
    all.push(info);
  }
  // The first `priorCount` sponsors renewed: each has last year's group, with a different number.
  for (let p = 0; p < priorCount && p < currentCount; p++) {
    const cur = current[p] as GroupInfo;
    const rng = rngFor(seed, Kind.catalog, 3000 + p);
    const effDay = addYears(cur.effDay, -1);
    const endDay = cur.effDay - 1;
    const rec: GroupRec = {
      ...cur.rec,
      id: shortId("gp", seed, Kind.catalog, 40_000 + p),
      groupId: String(100_000 + p),
      adminEmail: cur.rec.adminEmail.replace("@", `+${isoDay(effDay).slice(0, 4)}@`),
      effectiveDate: isoDay(effDay),
      terminationDate: isoDay(endDay),
      onboardingStatus: "completed",
      createdAt: isoTime(dayStartMs(effDay - 45) + p * 1000),
      plans: makePlans(5000 + p, Number(isoDay(effDay).slice(0, 4)), rng),
    };
    const info: GroupInfo = { rec, kind: "prior", hhStart: cur.hhStart, hhEnd: cur.hhEnd, effDay, endDay, claimSlots: 0, claimOffset: 0, ordinal: -1, renewedInto: cur };
    cur.prior = info;
    all.push(info);
  }
  all.sort((a, b) => (a.rec.createdAt < b.rec.createdAt ? -1 : a.rec.createdAt > b.rec.createdAt ? 1 : a.rec.id < b.rec.id ? -1 : 1));

  const renewingHouseholds = current.filter((g) => g.prior).reduce((n, g) => n + (g.hhEnd - g.hhStart), 0);
  const renewProb = renewingHouseholds ? Math.min(0.5, (0.01 * households) / renewingHouseholds) : 0;

  // Claim slots: enough per group and day that the mean claims per member comes out near the target.
  let offset = 0;
  for (const g of current) {
    const membersEst = (g.hhEnd - g.hhStart) * MEAN_HOUSEHOLD;
    // A group that started less than 180 days ago has claims only since its start: denser slots keep the mean.
    const activeDays = Math.min(CLAIM_DAYS, Math.max(30, genesisDay - g.effDay));
    g.claimSlots = o.claimsPerMember > 0 && g.hhEnd > g.hhStart ? Math.max(1, Math.ceil((membersEst * o.claimsPerMember) / activeDays / (CLAIM_SLOT_FILL * 0.85))) : 0;
    g.claimOffset = offset;
    offset += g.claimSlots;
  }
  const totalSlots = households * SLOTS_PER_HOUSEHOLD;
  return {
    seed,
    genesisDay,
    claimsPerMember: o.claimsPerMember,
    extraSsnKeys: o.extraSsnKeys ?? 0,
    households,
    totalSlots,
    designs,
    vendors,
    bundles,
    groups: all,
    current,
    renewProb,
    memberBaseMs: dayStartMs(genesisDay - 420),
    memberStepMs: Math.max(1, Math.floor((300 * 86_400_000) / totalSlots)),
    claimFirstDay: genesisDay - CLAIM_DAYS,
    claimSlotsPerDay: offset,
    claimStepMs: offset > 0 ? Math.max(1, Math.floor((12 * 3_600_000) / offset)) : 1,
    totalClaimSlots: offset * CLAIM_DAYS,
  };
}

/** The current group owning household `h` (binary search over contiguous ranges). */
export function groupOfHousehold(world: World, h: number): GroupInfo {
  const cur = world.current;
  let lo = 0;
  let hi = cur.length - 1;
  while (lo < hi) {
    const mid = (lo + hi + 1) >> 1;
    if ((cur[mid] as GroupInfo).hhStart <= h) lo = mid;
    else hi = mid - 1;
  }
  // Empty ranges share a start: take the last group whose range really contains h.
  return cur[lo] as GroupInfo;
}

/** The current group owning the claim slot offset `j` within a day. */
export function groupOfClaimOffset(world: World, j: number): GroupInfo {
  const cur = world.current;
  let lo = 0;
  let hi = cur.length - 1;
  while (lo < hi) {
    const mid = (lo + hi + 1) >> 1;
    if ((cur[mid] as GroupInfo).claimOffset <= j) lo = mid;
    else hi = mid - 1;
  }
  return cur[lo] as GroupInfo;
}

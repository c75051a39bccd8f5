/**
 * Members derived from their slot: slot = household * 5 + position. A household draws its size,
 * surname, address, plan, coverage dates and renewal from its own stream; each person draws the rest
 * from theirs. Nothing is stored; a page of 100 members costs well under a millisecond.
 */
import { isLeapYear, isoDay, isoTime, daysInMonth, firstOfMonth } from "./dates.js";
import { encodeId } from "./ids.js";
import { CITIES, FEMALE_FIRST, FEMALE_FIRST_UNICODE, LAST, LAST_UNICODE, MALE_FIRST, MALE_FIRST_UNICODE, STREETS, STREET_SUFFIX, emailSafe } from "./names.js";
import { Kind, Rng, rngFor } from "./prng.js";
import type { AddressRec, CoverageRec, MemberRec } from "./records.js";
import { addSsnVariants, servedSsn } from "./ssn-variants.js";
import { SLOTS_PER_HOUSEHOLD, groupOfHousehold, type GroupInfo, type World } from "./world.js";

export interface Household {
  readonly h: number;
  readonly group: GroupInfo;
  readonly size: number;
  readonly hasSpouse: boolean;
  readonly planIdx: number;
  readonly startDay: number;
  /** Last covered day, or -1 while covered. */
  readonly endDay: number;
  readonly renewal: boolean;
}

/** What only members need (claims skip it): drawn from a separate stream. */
export interface HouseholdDetails {
  readonly h: number;
  readonly lastName: string;
  readonly address: AddressRec;
  readonly phone: string;
}

const cache = new WeakMap<World, Household>();
const detailCache = new WeakMap<World, HouseholdDetails>();

/** The household `h` (the last one asked is cached: consecutive slots share it). */
export function householdAt(world: World, h: number): Household {
  const hit = cache.get(world);
  if (hit && hit.h === h) return hit;
  const rng = rngFor(world.seed, Kind.household, h);
  const group = groupOfHousehold(world, h);
  const u = rng.next();
  const size = u < 0.45 ? 1 : u < 0.65 ? 2 : u < 0.8 ? 3 : u < 0.92 ? 4 : 5;
  const hasSpouse = size >= 2 && rng.chance(0.75);
  const planIdx = rng.int(group.rec.plans.length);
  // Most households start with the plan year; the rest were hired later (some start in the future).
  const monthsSince = Math.max(0, monthsBetween(group.effDay, world.genesisDay));
  const startDay = rng.chance(0.7) ? group.effDay : firstOfMonth(group.effDay, rng.range(0, monthsSince + 1));
  const terminated = rng.chance(0.04) && startDay < world.genesisDay - 1;
  const endDay = terminated ? startDay + rng.int(world.genesisDay - 1 - startDay) : -1;
  const renewal = group.prior !== undefined && rng.chance(world.renewProb) && startDay === group.effDay;
  const hh: Household = { h, group, size, hasSpouse, planIdx, startDay, endDay, renewal };
  cache.set(world, hh);
  return hh;
}

export function householdDetails(world: World, h: number): HouseholdDetails {
  const hit = detailCache.get(world);
  if (hit && hit.h === h) return hit;
  const rng = rngFor(world.seed, Kind.household, h, 1);
  const lastName = rng.chance(0.06) ? rng.pick(LAST_UNICODE) : rng.pick(LAST);
  const [city, state, zip3] = rng.pick(CITIES);
  const address: AddressRec = {
    line1: `${rng.range(1, 9899)} ${rng.pick(STREETS)} ${rng.pick(STREET_SUFFIX)}`,
    line2: rng.chance(0.15) ? `Apt ${rng.range(1, 40)}${rng.pick(["", "A", "B"])}` : null,
    city,
    state,
    zip: `${zip3}${String(rng.int(100)).padStart(2, "0")}`,
  };
  const phone = `+1${rng.range(201, 989)}555${String(rng.int(10000)).padStart(4, "0")}`;
  const d: HouseholdDetails = { h, lastName, address, phone };
  detailCache.set(world, d);
  return d;
}

function monthsBetween(a: number, b: number): number {
  const da = new Date(a * 86_400_000);
  const db = new Date(b * 86_400_000);
  return (db.getUTCFullYear() - da.getUTCFullYear()) * 12 + db.getUTCMonth() - da.getUTCMonth();
}

export const memberId = (world: World, slot: number): string => encodeId(world.seed, Kind.member, slot);
/** Coverage ids: `slot * 2` for the current plan year, `slot * 2 + 1` for the prior one. */
export const coverageId = (world: World, slot: number, prior: boolean): string => encodeId(world.seed, Kind.coverage, slot * 2 + (prior ? 1 : 0));

/** Whether slot `slot` holds a member (before any overlay). */
export function slotExists(world: World, slot: number): boolean {
  const pos = slot % SLOTS_PER_HOUSEHOLD;
  return pos < householdAt(world, (slot - pos) / SLOTS_PER_HOUSEHOLD).size;
}

function dob(rng: Rng, genesisYear: number, minAge: number, maxAge: number): string {
  const year = genesisYear - rng.range(minAge, maxAge);
  if (rng.chance(0.012)) {
    // Leap-day births: the classic date bug in age and anniversary arithmetic.
    let y = year;
    while (!isLeapYear(y)) y--;
    return `${y}-02-29`;
  }
  const month = rng.int(12);
  const day = 1 + rng.int(daysInMonth(year, month));
  return `${year}-${String(month + 1).padStart(2, "0")}-${String(day).padStart(2, "0")}`;
}

/** The generated member of `slot`, or undefined for an empty slot. */
export function generateMember(world: World, slot: number): MemberRec | undefined {
  const pos = slot % SLOTS_PER_HOUSEHOLD;
  const h = (slot - pos) / SLOTS_PER_HOUSEHOLD;
  if (h >= world.households) return undefined;
  const hh = householdAt(world, h);
  if (pos >= hh.size) return undefined;
  const det = householdDetails(world, h);
  const rng = rngFor(world.seed, Kind.member, slot);
  const relationship = pos === 0 ? "self" : pos === 1 && hh.hasSpouse ? "spouse" : "child";
  const female = rng.chance(0.5);
  const unicode = rng.chance(0.07);
  const firstName = female ? rng.pick(unicode ? FEMALE_FIRST_UNICODE : FEMALE_FIRST) : rng.pick(unicode ? MALE_FIRST_UNICODE : MALE_FIRST);
  const ownSurname = relationship === "spouse" && rng.chance(0.15);
  const lastName = ownSurname ? rng.pick(LAST) : det.lastName;
  const genesisYear = Number(isoDay(world.genesisDay).slice(0, 4));
  const dateOfBirth = relationship === "child" ? dob(rng, genesisYear, 0, 24) : dob(rng, genesisYear, 22, 66);
  const ssnValue = servedSsn(rng);
  const emailN = rng.int(1000);
  const spouseEmail = rng.chance(0.5);
  const group = hh.group;
  const plan = group.rec.plans[hh.planIdx] ?? group.rec.plans[0];
  const subscriberSlot = h * SLOTS_PER_HOUSEHOLD;
  const coverages: CoverageRec[] = [];
  if (hh.renewal && group.prior) {
    const prior = group.prior;
    const pplan = prior.rec.plans[hh.planIdx % prior.rec.plans.length] ?? prior.rec.plans[0];
    coverages.push({
      id: coverageId(world, slot, true),
      groupId: prior.rec.groupId,
      groupPolicyId: prior.rec.id,
      planId: pplan?.id ?? "",
      subscriberCoverageId: coverageId(world, subscriberSlot, true),
      startDate: isoDay(prior.effDay),
      endDate: isoDay(prior.endDay),
      status: "terminated",
    });
  }
  coverages.push({
    id: coverageId(world, slot, false),
    groupId: group.rec.groupId,
    groupPolicyId: group.rec.id,
    planId: plan?.id ?? "",
    subscriberCoverageId: coverageId(world, subscriberSlot, false),
    startDate: isoDay(hh.startDay),
    endDate: hh.endDay >= 0 ? isoDay(hh.endDay) : null,
    status: hh.endDay >= 0 ? "terminated" : hh.startDay > world.genesisDay ? "pending" : "active",
  });
  const member: MemberRec = {
    id: memberId(world, slot),
    subscriberId: `S${100_000_000 + h}`,
    firstName,
    lastName,
    dateOfBirth,
    ssn: ssnValue,
    gender: female ? "F" : "M",
    memberType: relationship === "self" ? "employee" : "dependent",
    relationship,
    email: relationship === "self" || (relationship === "spouse" && spouseEmail) ? `${emailSafe(firstName)}.${emailSafe(lastName)}${emailN}@example.com` : null,
    phone: relationship === "child" ? null : det.phone,
    address: { ...det.address },
    createdAt: isoTime(world.memberBaseMs + slot * world.memberStepMs),
    coverages,
  };
  return addSsnVariants(member, world.seed, slot, world.extraSsnKeys);
}

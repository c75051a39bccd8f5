/** New people: random ones for simulated new hires, and ones built from an enrollment write's input. */
import { randomUuid } from "./ids.js";
import { CITIES, FEMALE_FIRST, FEMALE_FIRST_UNICODE, LAST, LAST_UNICODE, MALE_FIRST, MALE_FIRST_UNICODE, STREETS, STREET_SUFFIX, emailSafe } from "./names.js";
import type { Rng } from "./prng.js";
import type { AddressRec, CoverageRec, MemberRec } from "./records.js";

export function randomAddress(rng: Rng): AddressRec {
  const [city, state, zip3] = rng.pick(CITIES);
  return {
    line1: `${rng.range(1, 9899)} ${rng.pick(STREETS)} ${rng.pick(STREET_SUFFIX)}`,
    line2: rng.chance(0.15) ? `Unit ${rng.range(1, 300)}` : null,
    city,
    state,
    zip: `${zip3}${String(rng.int(100)).padStart(2, "0")}`,
  };
}

export function randomSsn(rng: Rng): string {
  let area = rng.range(1, 899);
  if (area === 666) area = 665;
  return `${String(area).padStart(3, "0")}-${String(rng.range(1, 99)).padStart(2, "0")}-${String(rng.range(1, 9999)).padStart(4, "0")}`;
}

function randomDob(rng: Rng, year: number, minAge: number, maxAge: number): string {
  const y = year - rng.range(minAge, maxAge);
  return `${y}-${String(rng.range(1, 12)).padStart(2, "0")}-${String(rng.range(1, 28)).padStart(2, "0")}`;
}

export interface NewPersonContext {
  relationship: "self" | "spouse" | "child";
  subscriberId: string;
  lastName: string;
  address: AddressRec;
  phone: string;
  year: number;
  createdAt: string;
  coverage: Omit<CoverageRec, "id" | "subscriberCoverageId"> & { subscriberCoverageId?: string };
}

/** A random new member (a simulated new hire or one of their dependents). */
export function randomMember(rng: Rng, ctx: NewPersonContext): MemberRec {
  const female = rng.chance(0.5);
  const unicode = rng.chance(0.07);
  const firstName = female ? rng.pick(unicode ? FEMALE_FIRST_UNICODE : FEMALE_FIRST) : rng.pick(unicode ? MALE_FIRST_UNICODE : MALE_FIRST);
  const id = randomUuid(rng);
  const covId = randomUuid(rng);
  const self = ctx.relationship === "self";
  return {
    id,
    subscriberId: ctx.subscriberId,
    firstName,
    lastName: ctx.lastName,
    dateOfBirth: ctx.relationship === "child" ? randomDob(rng, ctx.year, 0, 20) : randomDob(rng, ctx.year, 21, 64),
    ssn: randomSsn(rng),
    gender: female ? "F" : "M",
    memberType: self ? "employee" : "dependent",
    relationship: ctx.relationship,
    email: self ? `${emailSafe(firstName)}.${emailSafe(ctx.lastName)}${rng.int(1000)}@example.com` : null,
    phone: ctx.relationship === "child" ? null : ctx.phone,
    address: { ...ctx.address },
    createdAt: ctx.createdAt,
    coverages: [{ ...ctx.coverage, id: covId, subscriberCoverageId: ctx.coverage.subscriberCoverageId ?? covId }],
  };
}

export function randomLastName(rng: Rng): string {
  return rng.chance(0.06) ? rng.pick(LAST_UNICODE) : rng.pick(LAST);
}

/** Normalise an SSN to `NNN-NN-NNNN`. */
export function formatSsn(s: string): string {
  const d = s.replace(/\D/g, "");
  return `${d.slice(0, 3)}-${d.slice(3, 5)}-${d.slice(5, 9)}`;
}

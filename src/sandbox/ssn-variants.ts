/**
 * Services name SSN fields in many styles, at any depth: `dependentSsn`, `SSN`, a spouse's
 * `socialSecurityNumber`, a list of dependents with `ssnNumber`. With `extraSsnKeys`, a seeded
 * fraction of members carries such fields, so that the product's one SSN rule is tried against a
 * service that does this. The sandbox is the service, not the product: it names the keys itself.
 */
import { Kind, rngFor, type Rng } from "./prng.js";
import type { MemberRec } from "./records.js";

/** A served SSN: dashed, or nine digits only. */
export function servedSsn(rng: Rng, dashed = true): string {
  let area = rng.range(1, 899);
  if (area === 666) area = 665;
  const s = `${String(area).padStart(3, "0")}-${String(rng.range(1, 99)).padStart(2, "0")}-${String(rng.range(1, 9999)).padStart(4, "0")}`;
  return dashed ? s : s.replace(/-/g, "");
}

type Place = (m: Record<string, unknown>, rng: Rng) => void;

/** Where a variant goes: top level, in an object, in an object in an object, in a list, in a child. */
const PLACES: readonly Place[] = [
  (m, r) => (m.dependentSsn = servedSsn(r)),
  (m, r) => (m.SSN = servedSsn(r, false)),
  (m, r) => (m.spouse = { firstName: "Pat", socialSecurityNumber: servedSsn(r) }),
  (m, r) => (m.dependents = [{ firstName: "Kim", ssnNumber: servedSsn(r, false) }, { firstName: "Lee", dependent_ssn: servedSsn(r) }]),
  (m, r) => (m.employment = { employer: { ids: { "SSN-No": servedSsn(r) } } }),
  (m, r) => (m.social_security_no = servedSsn(r)),
  (m, r) => (m.household = [{ relation: "spouse", person: { SocialSecurityNo: servedSsn(r, false), spouseSSN: servedSsn(r) } }]),
  (m, r) => {
    const cov = (m.coverages as Record<string, unknown>[] | undefined)?.[0];
    if (cov) cov.beneficiary = { name: "Sam", memberSSNs: [servedSsn(r)] };
    else m.memberSSNs = [servedSsn(r)];
  },
];

/**
 * Add 1-3 SSN fields in other styles to `member`, for a `fraction` of members chosen by `seed` and
 * `slot` (the same member gets the same fields on every read). The member is changed in place.
 */
export function addSsnVariants(member: MemberRec, seed: number, slot: number, fraction: number): MemberRec {
  if (fraction <= 0) return member;
  const rng = rngFor(seed, Kind.member, slot, 9);
  if (!rng.chance(fraction)) return member;
  const n = rng.range(1, 3);
  for (let i = 0; i < n; i++) rng.pick(PLACES)(member as unknown as Record<string, unknown>, rng);
  return member;
}

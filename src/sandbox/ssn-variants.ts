/**
 * Services name SSN fields in many styles, at any depth: `dependentSsn`, `SSN`, a spouse's
 * `socialSecurityNumber`, a list of dependents with `ssnNumber`; and under other names (`SS#`,
 * `taxId`, `tin`, `nationalId`, `taxpayerId`), in typed pairs (`{type: "SSN", value}`) and in
 * free text (`notes`, an address line, a key). With `extraSsnKeys`, a seeded fraction of members
 * carries such fields, so that the product's one SSN rule is tried against a service that does
 * this. The sandbox is the service, not the product: it names the keys itself. Beside them, look-
 * alikes no rule may take for an SSN (a zip+4, a routing number, an EIN, `nationality`).
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

/** A served SSN with the two separators given (space, NBSP, a Unicode dash). */
function separated(rng: Rng, a: string, b: string): string {
  const [x, y, z] = servedSsn(rng).split("-");
  return `${x}${a}${y}${b}${z}`;
}

/** A served SSN as a JSON number (nine digits: no leading zero to lose). */
function numericSsn(rng: Rng): number {
  return Number(servedSsn(rng, false).replace(/^0/, "1"));
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
  // Issue 38: names, typed pairs and free text the first rule did not see.
  (m, r) => (m["SS#"] = servedSsn(r)),
  (m, r) => (m.guardian = { firstName: "Robin", socSecNum: servedSsn(r, false) }),
  (m, r) => (m.ssnLast4 = servedSsn(r, false)),
  (m, r) => (m.taxId = servedSsn(r)),
  (m, r) => (m.payee = { name: "Robin Doe", tin: servedSsn(r, false), ein: "12-3456789" }),
  (m, r) => (m.nationalId = servedSsn(r)),
  (m, r) => (m.governmentIds = [{ type: "SSN", value: servedSsn(r) }, { type: "passport", value: "X12345678" }]),
  (m, r) => (m.notes = `call re ${servedSsn(r)} before the 2024-01-15 cutoff`),
  (m, r) => (m.legacy = { ssn_token: servedSsn(r, false) }),
  (m, r) => (m.itin = servedSsn(r)),
  (m, r) => (m.identifiers = [{ kind: "national_id", number: numericSsn(r) }, { kind: "npi", number: 1234567893 }]),
  (m, r) => (m.documents = [{ name: "Social Security Number", identifier: servedSsn(r) }, { name: "Driver License", identifier: "D1234567" }]),
  (m, r) => (m.comments = ["verified by phone", `SSN ${separated(r, " ", " ")}`]),
  (m, r) => (m.lookup = { [servedSsn(r)]: "primary", "62701-1234": "zip+4" }),
  (m, r) => (m.beneficiaryIds = { "Soc.Sec.#": servedSsn(r) }),
  (m, r) => (m.address = { ...(m.address as object), line2: `c/o SSN ${separated(r, "\u2013", "\u2013")}` }),
  (m, r) => (m.federalTaxId = servedSsn(r, false)),
  (m, r) => (m.taxpayerId = servedSsn(r)),
  (m, r) => (m.employer = { contactNote: `ref ${separated(r, "\u00a0", "\u2212")}`, zipPlus4: "627011234", routingNumber: "021000021" }),
  (m) => (m.extras = { nationality: "US", taxAmount: "12.50", nationalProviderId: "1234567893", internationalId: "INT-55", settings: { tint: "blue" } }),
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

/**
 * SSN fields as a service may name them, in any style and at any depth, in typed pairs and in free
 * text: the model's members carry some besides `ssn`, drawn from their own stream (so the
 * schedules of a seed stay what they were). The names, the pairs' type names and the separators
 * are written out here, not taken from the product's rule: the check is that every number served
 * under any of them is found nowhere in plain, and is stored as expected.ts (the sim's own rule) says.
 */
import type { Rng } from "./rng.js";

/** Every key the model serves an SSN under: `ssn` on each member, and these in other styles. */
export const KEYS = [
  "SSN", "Ssn", "dependentSsn", "dependent_ssn", "ssnNumber", "ssn_number", "SSN-No", "socialSecurityNumber",
  "social_security_no", "SocialSecurityNo", "spouseSSN", "memberSSNs", "SSNumber", "SOCIAL_SECURITY_NUMBER",
  // Issue 38: other names of the same number, and masked forms that hold more than masking writes.
  "SS#", "socSecNum", "Soc.Sec.#", "ssnLast4", "dependentSsnToken", "taxId", "tax_id", "tin", "TIN", "itin", "nationalId",
  "national_id_number", "federalTaxId", "taxpayerId",
] as const;
export const SSN_KEYS: ReadonlySet<string> = new Set(["ssn", ...KEYS]);

/** Typed pairs as drawn: `[type key, value key, type name]`; the first six say SSN, the rest do not. */
const PAIRS = [
  ["type", "value", "SSN"], ["kind", "number", "TIN"], ["name", "identifier", "Social Security Number"], ["idType", "idNumber", "national_id"],
  ["scheme", "no", "SS#"], ["id_type", "id_number", "taxId"], ["type", "value", "EIN"], ["kind", "number", "passport"],
] as const;
const SSN_PAIRS = 6;
/** The type keys and value keys of the drawn pairs, and the type names that say SSN. */
export const TYPE_KEYS: ReadonlySet<string> = new Set(PAIRS.map((p) => p[0]));
export const VALUE_KEYS: ReadonlySet<string> = new Set(PAIRS.map((p) => p[1]));
export const SSN_TYPES: ReadonlySet<string> = new Set(PAIRS.slice(0, SSN_PAIRS).map((p) => p[2]));
const PAIR_LISTS = ["governmentIds", "identifiers", "documents"] as const;

/** Separators of an SSN in free text: dash, space, NBSP, the Unicode dashes and the minus sign. */
export const TEXT_SEPARATORS = ["-", " ", "\u00a0", "\u2010", "\u2011", "\u2012", "\u2013", "\u2014", "\u2015", "\u2212"] as const;
const TEXTS = [(s: string) => `call re ${s}`, (s: string) => `SSN ${s} on file, see 2026-02-01`, (s: string) => s, (s: string) => `(${s})`] as const;

/** `ssn` (dashed or digits only) written in a sentence, its two separators drawn from {@link TEXT_SEPARATORS}. */
export function ssnInText(rng: Rng, ssn: string): string {
  const d = ssn.replace(/\D/g, "");
  return rng.pick(TEXTS)(`${d.slice(0, 3)}${rng.pick(TEXT_SEPARATORS)}${d.slice(3, 5)}${rng.pick(TEXT_SEPARATORS)}${d.slice(5)}`);
}

/** A typed pair (`{type: "SSN", value}` and the like) in a list beside one that is not an SSN. */
function typedPairs(rng: Rng, newSsn: () => string): Record<string, unknown> {
  const [t, v, name] = PAIRS[rng.int(SSN_PAIRS)]!;
  const ssn = newSsn();
  const value = rng.chance(0.3) ? Number(ssn.replace(/\D/g, "")) : ssn; // a number now and then (areas 100-899: no leading zero)
  const [ct, cv, cname] = PAIRS[SSN_PAIRS + rng.int(PAIRS.length - SSN_PAIRS)]!;
  return { [rng.pick(PAIR_LISTS)]: [{ [t]: name, [v]: value }, { [ct]: cname, [cv]: "12-3456789" }] };
}

const WRAPPERS = ["spouse", "dependents", "employment", "guardian", "ids", "household", "beneficiary"] as const;

/**
 * Add 1-3 SSN fields, each 0-3 levels deep (objects, or lists of objects), to `record` (changed
 * in place), each holding a new SSN from `newSsn`: under a key of {@link KEYS} (7 in 10), in a
 * list of typed pairs (2 in 10), or in free text, a `notes` string or list (1 in 10). Returns the record.
 */
export function addPhiKeys<T extends object>(record: T, rng: Rng, newSsn: () => string): T {
  const target = record as Record<string, unknown>;
  const n = rng.between(1, 3);
  for (let i = 0; i < n; i++) {
    const draw = rng.int(10);
    let node: Record<string, unknown>;
    if (draw < 7) {
      const key = rng.pick(KEYS);
      node = { [key]: key === "memberSSNs" ? [newSsn(), newSsn()] : newSsn() };
    } else if (draw < 9) node = typedPairs(rng, newSsn);
    else node = { notes: rng.chance(0.5) ? ssnInText(rng, newSsn()) : ["no answer", ssnInText(rng, newSsn())] };
    let top = Object.keys(node)[0]!;
    for (let depth = rng.int(4); depth > 0; depth--) {
      top = rng.pick(WRAPPERS);
      const value = rng.chance(0.4) ? [{ note: "x" }, node] : node;
      node = { [top]: value };
    }
    if (top in target) continue; // a field of the record itself is never replaced
    target[top] = node[top];
  }
  return record;
}

/** Give one SSN field found at any depth of `record` a new number; false when it has none. */
export function changeOnePhiKey(record: object, newSsn: () => string): boolean {
  const walk = (v: unknown): boolean => {
    if (Array.isArray(v)) return v.some(walk);
    if (v === null || typeof v !== "object") return false;
    const o = v as Record<string, unknown>;
    for (const k of Object.keys(o)) {
      if ((KEYS as readonly string[]).includes(k) && typeof o[k] === "string") {
        o[k] = newSsn();
        return true;
      }
      if (walk(o[k])) return true;
    }
    return false;
  };
  return walk(record);
}

/**
 * SSN fields as a service may name them, in any style and at any depth: the model's members
 * carry some besides `ssn`, drawn from their own stream (so the schedules of a seed stay what
 * they were). The names are written out here, not taken from the product's rule: the check is
 * that every number served under any of them is found nowhere in plain.
 */
import type { Rng } from "./rng.js";

/** Every key the model serves an SSN under: `ssn` on each member, and these in other styles. */
export const KEYS = [
  "SSN", "Ssn", "dependentSsn", "dependent_ssn", "ssnNumber", "ssn_number", "SSN-No", "socialSecurityNumber",
  "social_security_no", "SocialSecurityNo", "spouseSSN", "memberSSNs", "SSNumber", "SOCIAL_SECURITY_NUMBER",
] as const;
export const SSN_KEYS: ReadonlySet<string> = new Set(["ssn", ...KEYS]);

const WRAPPERS = ["spouse", "dependents", "employment", "guardian", "ids", "household", "beneficiary"] as const;

/**
 * Add 1-3 SSN fields, each 0-3 levels deep (objects, or lists of objects), to `record` (changed
 * in place), each holding a new SSN from `newSsn`. Returns the record.
 */
export function addPhiKeys<T extends object>(record: T, rng: Rng, newSsn: () => string): T {
  const target = record as Record<string, unknown>;
  const n = rng.between(1, 3);
  for (let i = 0; i < n; i++) {
    const key = rng.pick(KEYS);
    let value: unknown = key === "memberSSNs" ? [newSsn(), newSsn()] : newSsn();
    let node: Record<string, unknown> = { [key]: value };
    let top = key as string;
    for (let depth = rng.int(4); depth > 0; depth--) {
      top = rng.pick(WRAPPERS);
      value = rng.chance(0.4) ? [{ note: "x" }, node] : node;
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

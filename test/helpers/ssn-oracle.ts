/**
 * What a stored record should hold in place of each SSN, worked out here and not by the store's
 * masker (a test whose expected value came from `maskPii` passed with an empty HMAC key). The
 * token is HMAC-SHA256 of the digits under the PII key, hex; `<key>_last4` the last four digits;
 * a value that is neither text nor a number gives nulls, and a list of SSNs a list of each. The SSN key names are
 * written out, not taken from the product's rule: a key that looks like one but is not listed
 * stops the test, so that the two lists cannot drift apart unseen.
 */
import { createHmac } from "node:crypto";

/** Every SSN key name the tests' data use (`test/sim/phi-keys.ts` draws from these too). */
export const SSN_KEY_NAMES: ReadonlySet<string> = new Set([
  "ssn", "SSN", "Ssn", "dependentSsn", "dependent_ssn", "ssnNumber", "ssn_number", "SSN-No", "socialSecurityNumber",
  "social_security_no", "SocialSecurityNo", "spouseSSN", "memberSSNs", "SSNumber", "SOCIAL_SECURITY_NUMBER",
]);
const LOOKS_LIKE_SSN = /ssn|social/i;
const MASKED = /_(token|last4)$/;

/** The token of an SSN, dashed or not: HMAC-SHA256 of its digits under `key`, in hex. */
export function expectedSsnToken(ssn: string, key: Buffer): string {
  return createHmac("sha256", key).update(ssn.replace(/\D/g, "")).digest("hex");
}

/** `record` with each SSN field replaced as the store must: `<key>_token` and `<key>_last4`. */
export function expectedMasked<T>(record: T, key: Buffer): T {
  return mask(record, key) as T;
}

function mask(value: unknown, key: Buffer): unknown {
  if (Array.isArray(value)) return value.map((v) => mask(v, key));
  if (value === null || typeof value !== "object") return value;
  const out: Record<string, unknown> = {};
  for (const [k, v] of Object.entries(value)) {
    if (!SSN_KEY_NAMES.has(k)) {
      if (LOOKS_LIKE_SSN.test(k) && !MASKED.test(k)) throw new Error(`test data key ${k} may name an SSN: add it to SSN_KEY_NAMES (test/helpers/ssn-oracle.ts) or rename it`);
      out[k] = mask(v, key);
      continue;
    }
    out[`${k}_last4`] = maskOne(v, (t) => t.replace(/\D/g, "").slice(-4));
    out[`${k}_token`] = maskOne(v, (t) => expectedSsnToken(t, key));
  }
  return out;
}

/** One SSN's stored form by `f`; a list of SSNs gives a list, element by element. */
function maskOne(v: unknown, f: (text: string) => string): unknown {
  if (Array.isArray(v)) return v.map((e) => maskOne(e, f));
  const text = typeof v === "number" && Number.isFinite(v) ? String(v) : v;
  return typeof text === "string" && text.length > 0 ? f(text) : null;
}

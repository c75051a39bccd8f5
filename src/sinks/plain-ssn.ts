import { ssnFieldsOf, tokeniseSsnShapes } from "../pii/ssn-key.js";

/**
 * A plain SSN never leaves the snapshot. The store masks every SSN the one rule finds into
 * `<key>_token` and `<key>_last4` (and a shape in free text into `[ssn:<token>]`), except under
 * `--pii keep` (asked for by name), which keeps the plain values in SQLite only: every sink reads
 * records through this, which drops every field the rule says holds an SSN (`ssnFieldsOf`: `ssn`,
 * `taxId`, `SS#`, a typed pair's value, `ssnLast4` holding nine digits, at any depth, in lists
 * too) and writes each shape in a string (value, list element or key) as `[ssn]`: the sinks have
 * no key to tokenise with. The `_token` and `_last4` fields masking wrote stay.
 *
 * @example withoutPlainSsn({id: "m1", ssn: "123-45-6789", ssn_last4: "6789", note: "re 123 45 6789"}) // {id: "m1", ssn_last4: "6789", note: "re [ssn]"}
 */
export function withoutPlainSsn<T>(value: T): T {
  return strip(value) as T;
}

function strip(value: unknown): unknown {
  if (typeof value === "string") return tokeniseSsnShapes(value);
  if (Array.isArray(value)) return value.map(strip);
  if (value === null || typeof value !== "object") return value;
  const obj = value as Record<string, unknown>;
  const ssn = ssnFieldsOf(obj);
  const out: Record<string, unknown> = {};
  for (const [k, v] of Object.entries(obj)) if (!ssn.includes(k)) out[tokeniseSsnShapes(k)] = strip(v);
  return out;
}

/**
 * A typed column's value as a sink may write it (the column holds what `data` holds at `path`):
 * null when the rule says the field holds an SSN, a string with each shape as `[ssn]`.
 */
export function plainFreeValue(path: string, value: unknown): unknown {
  const key = path.slice(path.lastIndexOf(".") + 1);
  if (ssnFieldsOf({ [key]: value }).length > 0) return null;
  return typeof value === "string" ? tokeniseSsnShapes(value) : value;
}

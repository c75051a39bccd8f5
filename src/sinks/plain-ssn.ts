import { isSsnKey } from "../pii/ssn-key.js";

/**
 * A plain SSN never leaves the snapshot. The store masks every SSN field into `<key>_token` and
 * `<key>_last4`, except under `--pii keep` (asked for by name), which keeps the plain value in
 * SQLite only: every sink reads records through this, which drops every field the one SSN rule
 * names (`isSsnKey`: `ssn`, `dependentSsn`, `ssnNumber`, `socialSecurityNumber`, at any depth,
 * in lists too). The `_token` and `_last4` fields stay.
 *
 * @example withoutPlainSsn({id: "m1", ssn: "123-45-6789", ssn_last4: "6789"}) // {id: "m1", ssn_last4: "6789"}
 */
export function withoutPlainSsn<T>(value: T): T {
  return strip(value) as T;
}

function strip(value: unknown): unknown {
  if (Array.isArray(value)) return value.map(strip);
  if (value === null || typeof value !== "object") return value;
  const out: Record<string, unknown> = {};
  for (const [k, v] of Object.entries(value)) if (!isSsnKey(k)) out[k] = strip(v);
  return out;
}

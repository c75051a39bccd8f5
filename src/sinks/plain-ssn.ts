/**
 * A plain SSN never leaves the snapshot. The store masks every `ssn` into `ssn_token` and
 * `ssn_last4`, except under `--pii keep` (asked for by name), which keeps the plain value in
 * SQLite only: every sink reads records through this, which drops any field named like an SSN
 * (`ssn`, `dependentSsn`, at any depth, in lists too). `ssn_token` and `ssn_last4` stay.
 *
 * @example withoutPlainSsn({id: "m1", ssn: "123-45-6789", ssn_last4: "6789"}) // {id: "m1", ssn_last4: "6789"}
 */
export function withoutPlainSsn<T>(value: T): T {
  return strip(value) as T;
}

const PLAIN_SSN_KEY = /ssn$/i;

function strip(value: unknown): unknown {
  if (Array.isArray(value)) return value.map(strip);
  if (value === null || typeof value !== "object") return value;
  const out: Record<string, unknown> = {};
  for (const [k, v] of Object.entries(value)) if (!PLAIN_SSN_KEY.test(k)) out[k] = strip(v);
  return out;
}

import { isSsnKey } from "../pii/ssn-key.js";

/** Turns an SSN into its stored replacement: `[<key>_last4, <key>_token]` (lists of them for a list of SSNs). */
export type SsnMasker = (ssn: unknown) => readonly [last4: unknown, token: unknown];

export interface CanonicalOptions {
  /** Replace every SSN field (`isSsnKey`), at any depth, by `<key>_last4` and `<key>_token`. */
  readonly maskSsn?: SsnMasker | undefined;
  /** Leave this top-level field out (a parent's list of children, stored apart). */
  readonly omit?: string | undefined;
  /** Add this top-level field (a child's parent id). */
  readonly extra?: readonly [string, string] | undefined;
}

/**
 * JSON with every object's keys sorted, recursively, and no whitespace: the form every version
 * is stored in and compared by. Two records that differ only in key order (or arrived on other
 * pages) give the same string, so an unchanged record is never an update.
 *
 * It builds a key-sorted copy and hands it to V8's native JSON.stringify (measured: about twice
 * as fast as writing the JSON in JavaScript, and several times faster than JSON.stringify with a
 * property-list replacer, which leaves V8's fast path). Masking SSNs happens in the same copy.
 *
 * @example canonicalJson({b: 1, a: {d: 2, c: 3}}) === '{"a":{"c":3,"d":2},"b":1}'
 */
export function canonicalJson(value: unknown, opts: CanonicalOptions = {}): string {
  return JSON.stringify(sorted(value, opts.maskSsn, opts.omit, opts.extra)) ?? "null";
}

function sorted(v: unknown, mask: SsnMasker | undefined, omit?: string, extra?: readonly [string, string]): unknown {
  if (v === null || typeof v !== "object") return v;
  if (Array.isArray(v)) {
    const out = new Array<unknown>(v.length);
    for (let i = 0; i < v.length; i++) out[i] = sorted(v[i], mask);
    return out;
  }
  const obj = v as Record<string, unknown>;
  const keys = Object.keys(obj);
  // What masking writes in place of each SSN key (`<key>_last4`, `<key>_token`): made only for
  // an object that has one, so the common record pays one memo look-up per key.
  let masked: Map<string, unknown> | undefined;
  if (mask !== undefined) {
    for (let i = 0, n = keys.length; i < n; i++) {
      const k = keys[i]!;
      if (!isSsnKey(k)) continue;
      const [last4, token] = mask(obj[k]);
      masked ??= new Map();
      masked.set(k, null).set(`${k}_last4`, last4).set(`${k}_token`, token);
      keys.push(`${k}_last4`, `${k}_token`);
    }
  }
  if (extra) keys.push(extra[0]);
  keys.sort();
  const out: Record<string, unknown> = {};
  // Not "": a record may have the key "" (it sorts first), and it must not be taken for a repeat.
  let last: string | undefined;
  for (const k of keys) {
    if (k === last || k === omit) continue;
    last = k;
    if (masked?.has(k)) {
      if (!isSsnKey(k)) out[k] = masked.get(k);
      continue;
    }
    if (extra && k === extra[0]) {
      out[k] = extra[1];
      continue;
    }
    const x = obj[k];
    if (x !== undefined) out[k] = x !== null && typeof x === "object" ? sorted(x, mask) : x;
  }
  return out;
}

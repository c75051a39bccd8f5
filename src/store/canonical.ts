import { createHash } from "node:crypto";

/**
 * JSON with every object's keys sorted, recursively, and no whitespace. Two records that differ
 * only in key order (or were served on different pages) give the same string, so their hashes
 * agree and an unchanged record is never counted as an update.
 *
 * @example canonicalJson({b: 1, a: {d: 2, c: 3}}) === '{"a":{"c":3,"d":2},"b":1}'
 */
export function canonicalJson(value: unknown): string {
  return JSON.stringify(sortKeys(value));
}

function sortKeys(value: unknown): unknown {
  if (Array.isArray(value)) return value.map(sortKeys);
  if (value === null || typeof value !== "object") return value;
  const out: Record<string, unknown> = {};
  for (const key of Object.keys(value).sort()) {
    const v = (value as Record<string, unknown>)[key];
    // undefined is not JSON: dropping it here keeps {a: undefined} and {} the same record.
    if (v !== undefined) out[key] = sortKeys(v);
  }
  return out;
}

/** The first 16 bytes of SHA-256 over the canonical JSON: enough to tell versions apart, half the bytes. */
export function hashCanonical(canonical: string): Buffer {
  return createHash("sha256").update(canonical).digest().subarray(0, 16);
}

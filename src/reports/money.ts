/**
 * Exact money for reports: amounts are integer cents (BigInt, summed by SQLite as 64-bit integers
 * from the snapshot's `*_cents` columns) and printed as decimal strings. No float ever holds one.
 */

/** Integer cents as the service writes amounts: `-1234.50`, `0.07`. */
export function centsToDecimal(cents: bigint): string {
  const neg = cents < 0n;
  const abs = neg ? -cents : cents;
  return `${neg ? "-" : ""}${abs / 100n}.${String(abs % 100n).padStart(2, "0")}`;
}

/** A decimal amount (at most two decimals) as integer cents; undefined for anything else. */
export function decimalToCents(s: string): bigint | undefined {
  const m = /^(-?)(\d+)(?:\.(\d{1,2}))?$/.exec(s);
  if (!m) return undefined;
  const cents = BigInt(m[2]!) * 100n + BigInt((m[3] ?? "").padEnd(2, "0") || "0");
  return m[1] ? -cents : cents;
}

/** A SQLite integer read as BigInt (or null, a sum over no rows) as cents. */
export const asCents = (v: unknown): bigint => (v === null || v === undefined ? 0n : BigInt(v as bigint | number));

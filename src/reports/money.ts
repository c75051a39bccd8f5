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

/** An integer SQLite returned under safeIntegers (a count, or a sum in cents; null for a sum over no rows) as BigInt. */
export const sqlInteger = (v: unknown): bigint => (v === null || v === undefined ? 0n : BigInt(v as bigint | number));

/** A decimal amount for people: thousands separated like counts (`-1,234,567.50`); the files keep `-1234567.50`. */
export function moneyText(decimal: string): string {
  const m = /^(-?)(\d+)(\.\d+)?$/.exec(decimal);
  if (!m) return decimal;
  return `${m[1]}${m[2]!.replace(/\B(?=(\d{3})+$)/g, ",")}${m[3] ?? ""}`;
}

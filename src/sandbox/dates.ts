/** Calendar arithmetic on day numbers (days since 1970-01-01, UTC): cheap and free of time zones. */

const DAY_MS = 86_400_000;

/** `"2026-01-15"` → day number. */
export function dayNum(iso: string): number {
  const y = Number(iso.slice(0, 4));
  const m = Number(iso.slice(5, 7));
  const d = Number(iso.slice(8, 10));
  return Math.floor(Date.UTC(y, m - 1, d) / DAY_MS);
}

// Day strings are asked for millions of times while serving; Date#toISOString is the hot spot.
const DAY_CACHE_BASE = -25_000; // 1901
const dayCache: (string | undefined)[] = [];

/** Day number → `"YYYY-MM-DD"`. */
export function isoDay(n: number): string {
  const i = n - DAY_CACHE_BASE;
  if (i >= 0 && i < 80_000) {
    const hit = dayCache[i];
    if (hit !== undefined) return hit;
    const s = new Date(n * DAY_MS).toISOString().slice(0, 10);
    dayCache[i] = s;
    return s;
  }
  return new Date(n * DAY_MS).toISOString().slice(0, 10);
}

const pad2 = (n: number): string => (n < 10 ? `0${n}` : String(n));

/** Epoch milliseconds → ISO 8601 timestamp in UTC (same text as Date#toISOString for years 1901-2119). */
export function isoTime(ms: number): string {
  const day = Math.floor(ms / DAY_MS);
  let rest = ms - day * DAY_MS;
  const h = Math.floor(rest / 3_600_000);
  rest -= h * 3_600_000;
  const m = Math.floor(rest / 60_000);
  rest -= m * 60_000;
  const s = Math.floor(rest / 1000);
  const milli = rest - s * 1000;
  return `${isoDay(day)}T${pad2(h)}:${pad2(m)}:${pad2(s)}.${milli < 10 ? `00${milli}` : milli < 100 ? `0${milli}` : milli}Z`;
}

export function dayStartMs(n: number): number {
  return n * DAY_MS;
}

/** The first day of the month `months` after the month of day `n` (negative goes back). */
export function firstOfMonth(n: number, months = 0): number {
  const d = new Date(n * DAY_MS);
  return Math.floor(Date.UTC(d.getUTCFullYear(), d.getUTCMonth() + months, 1) / DAY_MS);
}

/** Same calendar day `years` later (Feb 29 falls back to Feb 28). */
export function addYears(n: number, years: number): number {
  const d = new Date(n * DAY_MS);
  const y = d.getUTCFullYear() + years;
  const m = d.getUTCMonth();
  const day = Math.min(d.getUTCDate(), daysInMonth(y, m));
  return Math.floor(Date.UTC(y, m, day) / DAY_MS);
}

export function daysInMonth(year: number, month0: number): number {
  return new Date(Date.UTC(year, month0 + 1, 0)).getUTCDate();
}

export function isLeapYear(y: number): boolean {
  return (y % 4 === 0 && y % 100 !== 0) || y % 400 === 0;
}

/** A strict `YYYY-MM-DD` check that also rejects impossible dates such as 2025-02-30. */
export function isValidIsoDay(s: string): boolean {
  if (!/^\d{4}-\d{2}-\d{2}$/.test(s)) return false;
  return isoDay(dayNum(s)) === s;
}

export const DAY = DAY_MS;

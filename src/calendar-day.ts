/**
 * What a calendar day is (`YYYY-MM-DD` that names a real day: no 2026-02-30), for every input that
 * takes one: command-line dates and the dates in files the user gives.
 */

/**
 * @example
 * isCalendarDay("2028-02-29") // true
 * isCalendarDay("2026-02-30") // false
 */
export function isCalendarDay(v: string): boolean {
  if (!/^\d{4}-\d{2}-\d{2}$/.test(v)) return false;
  const d = new Date(`${v}T00:00:00Z`);
  return !Number.isNaN(d.getTime()) && d.toISOString().slice(0, 10) === v;
}

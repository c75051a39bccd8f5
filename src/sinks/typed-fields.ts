/**
 * The types the warehouse sinks give the documented scalar fields (`ViewColumns`): calendar dates
 * (`YYYY-MM-DD` in the schemas) as DATE, money (decimal strings) as exact DECIMAL, the instants the
 * service stamps (`createdAt`) as a timestamp in UTC (Postgres `timestamptz`, Parquet TIMESTAMP
 * adjusted to UTC), so that an analyst compares and truncates them as times, not as strings;
 * everything else as text. The lists follow `schemas/` (a test checks them against the zod schemas).
 *
 * A value that does not fit its type (a date the calendar does not have, an amount with more than
 * two decimals) is NULL in its typed column, never an error that stops a load and never a wrong
 * value: the whole record is kept beside it (`data`), exactly as stored.
 */
import { ViewColumns, columnName, type StoredResource } from "../store/schema/resources.js";

export type FieldType = "text" | "date" | "decimal" | "timestamp";

const DateFields: Partial<Record<StoredResource, readonly string[]>> = {
  groups: ["effectiveDate", "terminationDate"],
  members: ["dateOfBirth"],
  coverages: ["startDate", "endDate"],
  claims: ["serviceDateFrom", "serviceDateTo", "processing.receivedDate", "processing.adjudicatedDate", "processing.paidDate"],
};

/** The fields holding an instant (ISO 8601 with an offset: `IsoTimestamp` in the schemas). */
const TimestampFields: Partial<Record<StoredResource, readonly string[]>> = {
  groups: ["createdAt"],
  members: ["createdAt"],
  claims: ["createdAt"],
};

const DecimalFields: Partial<Record<StoredResource, readonly string[]>> = {
  claims: ["claimAmount", "allowedAmount", "paidAmount"],
};

/** The typed fields of a list's items, by the list's file (a claim line's amount). */
const ChildDecimalFields: Readonly<Record<string, readonly string[]>> = {
  claim_lines: ["amount"],
};

/** Scale of every DECIMAL column: the service's amounts are cents. */
export const DECIMAL_SCALE = 2;
/** Precision of every DECIMAL column: up to 10^16 (the cents fit in a 64-bit integer). */
export const DECIMAL_PRECISION = 18;

export interface TypedField {
  /** The field's path in the record (`processing.paidDate`). */
  readonly path: string;
  /** Its column name (`processing_paidDate`), as in the SQLite views. */
  readonly name: string;
  readonly type: FieldType;
}

export function fieldType(resource: StoredResource, path: string): FieldType {
  if (DateFields[resource]?.includes(path)) return "date";
  if (DecimalFields[resource]?.includes(path)) return "decimal";
  if (TimestampFields[resource]?.includes(path)) return "timestamp";
  return "text";
}

/** The type of a list item's field (`claim_lines`, `amount`: decimal). */
export const childFieldType = (file: string, path: string): FieldType => (ChildDecimalFields[file]?.includes(path) ? "decimal" : "text");

/** The documented scalar fields of a resource, in view order, with their types. */
export function typedFields(resource: StoredResource): TypedField[] {
  return ViewColumns[resource].map((path) => ({ path, name: columnName(path), type: fieldType(resource, path) }));
}

/** The value at a dotted path, or undefined. */
export function valueAt(record: Record<string, unknown>, path: string): unknown {
  let v: unknown = record;
  for (const k of path.split(".")) {
    if (v === null || typeof v !== "object" || Array.isArray(v)) return undefined;
    v = (v as Record<string, unknown>)[k];
  }
  return v;
}

/** Text for a text column: strings as they are, numbers and booleans as text, anything else as JSON; null for none. */
export function asText(v: unknown): string | null {
  if (v === null || v === undefined) return null;
  if (typeof v === "string") return v;
  if (typeof v === "number" || typeof v === "boolean") return String(v);
  return JSON.stringify(v);
}

const DATE = /^(\d{4})-(\d{2})-(\d{2})$/;

/** Dates already read: a delivery holds few distinct dates, each on many rows. */
const epochDays = new Map<string, number | null>();

/** Days since 1970-01-01 of a real calendar date `YYYY-MM-DD`; null for anything else. */
export function asEpochDay(v: unknown): number | null {
  if (typeof v !== "string") return null;
  let day = epochDays.get(v);
  if (day === undefined) {
    if (epochDays.size >= 100_000) epochDays.clear();
    day = readEpochDay(v);
    epochDays.set(v, day);
  }
  return day;
}

function readEpochDay(v: string): number | null {
  const m = DATE.exec(v);
  if (!m) return null;
  const [y, mo, d] = [Number(m[1]), Number(m[2]), Number(m[3])];
  const t = Date.UTC(y, mo - 1, d);
  const back = new Date(t);
  if (back.getUTCFullYear() !== y || back.getUTCMonth() !== mo - 1 || back.getUTCDate() !== d || y < 1) return null;
  return t / 86_400_000;
}

/** A real calendar date as its text, or null. */
export const asDate = (v: unknown): string | null => (asEpochDay(v) === null ? null : (v as string));

const INSTANT = /^(\d{4}-\d{2}-\d{2})[T ]([01]\d|2[0-3]):([0-5]\d):([0-5]\d)(?:\.(\d{1,9}))?(Z|([+-])([01]\d|2[0-3]):?([0-5]\d))$/;

/** An instant PostgreSQL reads as `timestamptz` (a real calendar day, a time, an offset), as sent; null for anything else. */
export function asInstant(v: unknown): string | null {
  return asEpochMicros(v) === null ? null : (v as string);
}

/**
 * Microseconds since 1970-01-01T00:00:00Z of an instant {@link asInstant} accepts, or null. Digits
 * past the microsecond are rounded as PostgreSQL rounds them (to the nearest, a half to even), so
 * Parquet and the warehouse hold the same instant.
 *
 * @example asEpochMicros("2026-01-05T09:00:00.5-05:00") // 1767621600500000n
 */
export function asEpochMicros(v: unknown): bigint | null {
  if (typeof v !== "string") return null;
  const m = INSTANT.exec(v);
  if (!m) return null;
  const day = asEpochDay(m[1]);
  if (day === null) return null;
  const offsetMinutes = m[6] === "Z" ? 0 : (m[7] === "-" ? -1 : 1) * (Number(m[8]) * 60 + Number(m[9]));
  const seconds = day * 86_400 + Number(m[2]) * 3600 + Number(m[3]) * 60 + Number(m[4]) - offsetMinutes * 60;
  const x = Number(`0.${m[5] ?? "0"}`) * 1e6;
  let micros = Math.round(x);
  if (micros - x === 0.5 && micros % 2 !== 0) micros -= 1;
  return BigInt(seconds) * 1_000_000n + BigInt(micros);
}

const DECIMAL = /^(-?)(\d+)(?:\.(\d{1,2}))?$/;

/**
 * The amount in cents, exactly, of a decimal string with at most two decimals within the column's
 * precision (`"-1234.5"` -> -123450n); null for anything else (a JSON number, `"1,234.50"`,
 * `"12.345"`).
 */
export function asCents(v: unknown): bigint | null {
  if (typeof v !== "string") return null;
  const m = DECIMAL.exec(v);
  if (!m) return null;
  const whole = m[2]!.replace(/^0+(?=\d)/, "");
  if (whole.length > DECIMAL_PRECISION - DECIMAL_SCALE) return null;
  const cents = BigInt(whole) * 100n + BigInt((m[3] ?? "").padEnd(2, "0") || "0");
  return m[1] === "-" ? -cents : cents;
}

/** The amount as decimal text a DECIMAL column takes (`"1234.50"` stays as sent), or null: what {@link asCents} reads, without its arithmetic. */
export function asDecimal(v: unknown): string | null {
  if (typeof v !== "string") return null;
  const m = DECIMAL.exec(v);
  return m && m[2]!.replace(/^0+(?=\d)/, "").length <= DECIMAL_PRECISION - DECIMAL_SCALE ? v : null;
}

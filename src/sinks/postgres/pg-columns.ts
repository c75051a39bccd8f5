/**
 * The warehouse's typed columns: the documented scalar fields typed as the other sinks type them
 * (dates as `date`, money as exact `numeric`, the rest `text`), and one refinement of its own: the
 * instants the service stamps (`createdAt`) as `timestamptz`, so that an analyst compares and
 * truncates them as times, not as strings. Each column comes with the text COPY gives it; a value
 * that does not fit its type is NULL there (the whole record stays in `data`), never a failed load.
 */
import type { StoredResource } from "../../store/resources.js";
import { asDate, asDecimal, asEpochDay, asText, typedFields, type FieldType } from "../typed-fields.js";

const PG_TYPE: Record<FieldType | "timestamp", string> = { text: "text", date: "date", decimal: "numeric", timestamp: "timestamptz" };

/** The fields holding an instant (ISO 8601 with an offset), by path. */
const TimestampFields: ReadonlySet<string> = new Set(["createdAt"]);

const q = (ident: string): string => `"${ident.replace(/"/g, '""')}"`;

export interface WarehouseColumn {
  /** Quoted, as in the SQLite views (`"memberId"`). */
  readonly name: string;
  readonly type: string;
  /** The value's text for COPY, or null (NULL). */
  readonly text: (v: unknown) => string | null;
}

const INSTANT = /^(\d{4}-\d{2}-\d{2})[T ]([01]\d|2[0-3]):([0-5]\d):([0-5]\d)(\.\d{1,9})?(Z|[+-](?:[01]\d|2[0-3]):?[0-5]\d)$/;

/** An instant PostgreSQL reads as `timestamptz` (a real calendar day, a time, an offset), as sent; null for anything else. */
export function asInstant(v: unknown): string | null {
  if (typeof v !== "string") return null;
  const m = INSTANT.exec(v);
  return m && asEpochDay(m[1]) !== null ? v : null;
}

/** The typed columns of a resource's tables, in order. */
export function warehouseColumns(r: StoredResource): WarehouseColumn[] {
  return typedFields(r).map((f) => {
    const type = TimestampFields.has(f.path) ? "timestamp" : f.type;
    const text = type === "timestamp" ? asInstant : type === "date" ? asDate : type === "decimal" ? asDecimal : asText;
    return { name: q(f.name), type: PG_TYPE[type], text };
  });
}

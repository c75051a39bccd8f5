/**
 * The warehouse's typed columns: the documented scalar fields typed as the other sinks type them
 * (typed-fields.ts: dates as `date`, money as exact `numeric`, the instants the service stamps
 * (`createdAt`) as `timestamptz`, the rest `text`). Each column comes with the text COPY gives it;
 * a value that does not fit its type is NULL there (the whole record stays in `data`), never a
 * failed load.
 */
import type { StoredResource } from "../../store/schema/resources.js";
import { asDate, asDecimal, asInstant, asText, typedFields, type FieldType } from "../typed-fields.js";

const PG_TYPE: Record<FieldType, string> = { text: "text", date: "date", decimal: "numeric", timestamp: "timestamptz" };

const q = (ident: string): string => `"${ident.replace(/"/g, '""')}"`;

export interface WarehouseColumn {
  /** Quoted, as in the SQLite views (`"memberId"`). */
  readonly name: string;
  readonly type: string;
  /** The value's text for COPY, or null (NULL). */
  readonly text: (v: unknown) => string | null;
}

/** The typed columns of a resource's tables, in order. */
export function warehouseColumns(r: StoredResource): WarehouseColumn[] {
  return typedFields(r).map((f) => {
    const text = f.type === "timestamp" ? asInstant : f.type === "date" ? asDate : f.type === "decimal" ? asDecimal : asText;
    return { name: q(f.name), type: PG_TYPE[f.type], text };
  });
}

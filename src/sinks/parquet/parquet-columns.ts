/**
 * The Parquet files' columns, apart from the writer (so that the data dictionary reads them
 * without loading it): each column's name, its type, whether it is required, and how a row's
 * value is read, for a resource's file and for a child list's (`claim_lines`).
 */
import { columnName, type StoredResource } from "../../store/schema/resources.js";
import { LINE_BASE, orderChangedFields, type ChildList } from "../files/layout.js";
import type { Delta } from "../run-deltas.js";
import { asCents, asEpochDay, asEpochMicros, asText, childFieldType, typedFields, valueAt, type FieldType } from "../typed-fields.js";

export interface ParquetColumn<R = ParquetRow> {
  readonly name: string;
  readonly type: FieldType | "string" | "int64" | "json" | "boolean";
  readonly required?: boolean;
  readonly value: (row: R) => unknown;
}

export interface ParquetRow {
  readonly d: Delta;
  /** For a child list: the item and its index. */
  readonly item?: Record<string, unknown>;
  readonly index?: number;
}

function typed(type: FieldType, v: unknown): unknown {
  if (type === "date") return asEpochDay(v);
  if (type === "decimal") return asCents(v);
  if (type === "timestamp") return asEpochMicros(v);
  return asText(v);
}

export function parquetColumns(resource: StoredResource): ParquetColumn[] {
  return [
    { name: "op", type: "string", required: true, value: (r) => r.d.op },
    { name: "run_id", type: "int64", required: true, value: (r) => BigInt(r.d.runId) },
    { name: "id", type: "string", required: true, value: (r) => r.d.id },
    { name: "changed_fields", type: "json", value: (r) => orderChangedFields(resource, r.d.changedFields, columnName) },
    ...typedFields(resource).map((f): ParquetColumn => ({ name: f.name, type: f.type, value: (r) => typed(f.type, valueAt(r.d.data, f.path)) })),
    { name: "data", type: "json", required: true, value: (r) => r.d.data },
  ];
}

/** A list item (a claim line): its parent, its number (from 1), its documented fields typed, and the whole item. */
export function childParquetColumns(child: ChildList): ParquetColumn[] {
  return [
    { name: "op", type: "string", required: true, value: (r) => r.d.op },
    { name: "run_id", type: "int64", required: true, value: (r) => BigInt(r.d.runId) },
    { name: child.parentColumn, type: "string", required: true, value: (r) => r.d.id },
    { name: child.numberColumn, type: "int64", required: true, value: (r) => BigInt(r.index! + LINE_BASE) },
    ...child.fields.map((f): ParquetColumn => {
      const type = childFieldType(child.file, f);
      return { name: f, type, value: (r) => typed(type, r.item![f]) };
    }),
    { name: "data", type: "json", required: true, value: (r) => r.item },
  ];
}


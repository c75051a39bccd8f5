/**
 * The columns of every folder file, as the data dictionary (docs/outputs.md) lists them, built from
 * the definitions the writers use (files/layout.ts, the Parquet columns, the documented fields and
 * their types), and the dictionary's version: a hash of those columns, their types, units and
 * nullability, written in every folder's manifest. The version lives here, beside what it hashes,
 * and not beside the Markdown (dictionary.ts), which shows example rows through the writers: the
 * writers' manifest needs the version, and must not need the writers back.
 */
import { createHash } from "node:crypto";
import { StoredResources, ViewColumns, columnName } from "../store/schema/resources.js";
import { ChildLists, LINE_BASE, LeadColumns, childLeadColumns } from "./files/layout.js";
import { childParquetColumns, parquetColumns, type ParquetColumn } from "./parquet/parquet-columns.js";
import { DECIMAL_PRECISION, DECIMAL_SCALE } from "./typed-fields.js";

export interface DictionaryColumn {
  /** Its name in CSV (null: not in CSV). */
  readonly csv: string | null;
  /** Its name in Parquet (null: not in Parquet; JSONL has `op, run_id, id, changed_fields, data`). */
  readonly parquet: string | null;
  readonly type: string;
  readonly parquetType: string | null;
  readonly unit: string;
  readonly nullable: string;
}

export interface DictionaryFile {
  /** The file's name without its extension (`members`, `claim_lines`). */
  readonly name: string;
  readonly columns: readonly DictionaryColumn[];
}

/** The list files' own columns (`claim_id`, `line_no`), from their definitions in files/layout.ts. */
const childMeaning = (): [string, { unit: string; nullable: string }][] =>
  StoredResources.flatMap((r) => {
    const c = ChildLists[r];
    if (!c) return [];
    return [
      [c.parentColumn, { unit: `its parent record's \`id\` (in \`${r}\`)`, nullable: "never" }],
      [c.numberColumn, { unit: `the item's place in its \`${c.field}\` list, counted from ${LINE_BASE} (the first item is ${LINE_BASE}), as in the snapshot's and the warehouse's \`${c.file}.${c.numberColumn}\``, nullable: "never" }],
    ];
  });

const Meaning: Readonly<Record<string, { unit?: string; nullable: string }>> = {
  op: { unit: "`insert`, `update` or `delete`", nullable: "never" },
  run_id: { unit: "the run that recorded the change", nullable: "never" },
  id: { unit: "the record's id", nullable: "never" },
  changed_fields: { unit: "JSON array of the changed field paths, named as this format names its columns, in column order (see [changed_fields](#changed_fields))", nullable: "empty (null) except on updates" },
  data: { unit: "the whole record (item) as stored, JSON", nullable: "never" },
  ...Object.fromEntries(childMeaning()),
};

function parquetType(c: ParquetColumn): string {
  switch (c.type) {
    case "int64":
      return "INT64";
    case "date":
      return "INT32 (DATE)";
    case "timestamp":
      return "INT64 (TIMESTAMP(MICROS, UTC))";
    case "decimal":
      return `INT64 (DECIMAL(${DECIMAL_PRECISION},${DECIMAL_SCALE}))`;
    case "json":
      return "BYTE_ARRAY (JSON)";
    default:
      return "BYTE_ARRAY (UTF8)";
  }
}

function logical(c: ParquetColumn): string {
  if (c.name === "changed_fields") return "list of text";
  if (c.type === "int64") return "integer";
  if (c.type === "string") return "text";
  return c.type;
}

function unitOf(c: ParquetColumn): string {
  if (c.type === "date") return "calendar date, `YYYY-MM-DD` in CSV";
  if (c.type === "decimal") return "dollars, 2 decimals, exact (CSV: the decimal text as sent, `1234.50`)";
  if (c.type === "timestamp") return "an instant, microseconds, UTC (CSV: the text as sent, `2026-01-05T14:03:00Z`)";
  return "";
}

/** One file's columns: the CSV ones in order, each beside its Parquet column, then those of one format only. */
function fileColumns(csvColumns: readonly string[], pq: readonly ParquetColumn[], csvRest: string): DictionaryColumn[] {
  const byName = new Map(pq.map((c) => [c.name, c]));
  const out: DictionaryColumn[] = [];
  for (const name of csvColumns) {
    const c = byName.get(columnName(name));
    if (!c) throw new Error(`dictionary: CSV column ${name} has no Parquet column`);
    byName.delete(c.name);
    const m = Meaning[c.name];
    out.push({ csv: name, parquet: c.name, type: logical(c), parquetType: parquetType(c), unit: m?.unit ?? unitOf(c), nullable: m?.nullable ?? (c.required ? "never" : "when absent") });
  }
  out.push({ csv: csvRest, parquet: null, type: "text", parquetType: null, unit: "as sent (nested with dots; a list as JSON)", nullable: "when absent" });
  for (const c of byName.values()) {
    const m = Meaning[c.name];
    out.push({ csv: null, parquet: c.name, type: logical(c), parquetType: parquetType(c), unit: m?.unit ?? "", nullable: m?.nullable ?? "when absent" });
  }
  return out;
}

/** Every file of a folder, in the order a run applies its resources. */
export function dictionaryFiles(): DictionaryFile[] {
  const files: DictionaryFile[] = [];
  for (const r of StoredResources) {
    files.push({ name: r, columns: fileColumns([...LeadColumns, ...ViewColumns[r]], parquetColumns(r), "(any other field, sorted)") });
    const child = ChildLists[r];
    if (child) files.push({ name: child.file, columns: fileColumns([...childLeadColumns(child), ...child.fields], childParquetColumns(child), "(any other field of the item, sorted)") });
  }
  return files;
}

/** The dictionary's version: it changes whenever a file, column, type, unit or nullability does. */
export const DICTIONARY_VERSION = createHash("sha256").update(JSON.stringify(dictionaryFiles())).digest("hex").slice(0, 12);

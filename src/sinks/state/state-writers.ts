/**
 * A state or history view's file in one of the three formats, streamed from its rows: Parquet
 * through the delta files' writer (row groups of ROW_GROUP rows; dates DATE, money DECIMAL(18,2),
 * instants TIMESTAMP(MICROS, UTC), run ids INT64, flags BOOLEAN, `data` JSON); CSV (RFC 4180, a
 * header, CRLF) and JSON Lines with the same columns in the same order, a date as `YYYY-MM-DD`, an
 * amount as its decimal text (`"1234.50"`), an instant as sent, `data` as the stored JSON. A
 * value that does not fit its type is null (empty in CSV), as in the delta files.
 */
import { csvRow } from "../csv/csv-row.js";
import { HashedFile } from "../files/hashed-file.js";
import type { FileFormatName } from "../files/folder-sink.js";
import type { ManifestFile } from "../files/manifest.js";
import type { ParquetColumn } from "../parquet/parquet-columns.js";
import { asCents, asDate, asDecimal, asEpochDay, asEpochMicros, asInstant, asText } from "../typed-fields.js";
import type { StateColumn, StateRow, StateType } from "./state-views.js";

/**
 * Rows per Parquet row group: what bounds the export's memory (a group's records are held parsed
 * until it is written). At the delta files' 50,000, a state export of 100,000 members peaked at
 * 582 MB; the bar is 300 MB at any size.
 */
export const STATE_ROW_GROUP = 10_000;

/** The value Parquet holds for `v` in a column of type `t`. */
function parquetValue(t: StateType, v: unknown): unknown {
  if (v === null || v === undefined) return null;
  switch (t) {
    case "date":
      return asEpochDay(v);
    case "decimal":
      return asCents(v);
    case "timestamp":
      return asEpochMicros(v);
    case "int64":
      return BigInt(v as number);
    case "boolean":
      return v as boolean;
    case "json":
      return JSON.parse(v as string) as unknown;
    default:
      return asText(v);
  }
}

/** The value a JSON line holds (the text forms CSV writes, numbers and flags as JSON's own). */
function jsonValue(t: StateType, v: unknown): unknown {
  if (v === null || v === undefined) return null;
  switch (t) {
    case "date":
      return asDate(v);
    case "decimal":
      return asDecimal(v);
    case "timestamp":
      return asInstant(v);
    case "int64":
    case "boolean":
      return v;
    default:
      return asText(v);
  }
}

function csvValue(t: StateType, v: unknown): string {
  if (t === "json") return (v as string | null) ?? "";
  const j = jsonValue(t, v);
  return j === null ? "" : String(j);
}

function jsonLine(columns: readonly StateColumn[], row: StateRow): string {
  const parts = columns.map((c) => {
    const v = c.at(row);
    // `data` as stored: it is JSON.stringify's own output, written as it is.
    const text = c.type === "json" ? ((v as string | null) ?? "null") : JSON.stringify(jsonValue(c.type, v));
    return `${JSON.stringify(c.name)}:${text}`;
  });
  return `{${parts.join(",")}}\n`;
}

function writeText(dir: string, name: string, rows: Iterable<StateRow>, header: string | undefined, line: (row: StateRow) => string): ManifestFile {
  const file = new HashedFile(dir, name);
  try {
    if (header !== undefined) file.text(header);
    for (const row of rows) file.row(line(row));
    return file.close();
  } finally {
    file.abandon();
  }
}

/** Write `rows` as `dir/<view>.<format>` (created new, fsynced): its manifest entry. */
export async function writeStateFile(dir: string, view: string, format: FileFormatName, columns: readonly StateColumn[], rows: Iterable<StateRow>): Promise<ManifestFile> {
  const name = `${view}.${format}`;
  if (format === "csv") {
    return writeText(dir, name, rows, csvRow(columns.map((c) => c.name)), (row) => csvRow(columns.map((c) => csvValue(c.type, c.at(row)))));
  }
  if (format === "jsonl") return writeText(dir, name, rows, undefined, (row) => jsonLine(columns, row));
  const { writeFile } = await import("../parquet/parquet-format.js");
  const pq = columns.map((c): ParquetColumn<StateRow> => ({
    name: c.name,
    type: c.type,
    ...(c.required ? { required: true } : {}),
    value: (row) => parquetValue(c.type, c.at(row)),
  }));
  return writeFile(dir, name, pq, rows, STATE_ROW_GROUP);
}

/**
 * Parquet for cloud warehouses and data lakes (hyparquet-writer): one file per stored resource
 * and one per child list (`claim_lines.parquet`), always all of them (no rows when nothing
 * changed). Columns (files/layout.ts): `op`, `run_id` (INT64), `id`, `changed_fields` (JSON: an
 * update's changed columns by their names here, `address_city`, in column order; null otherwise),
 * every documented scalar field typed (dates as DATE, amounts as DECIMAL(18,2), exact; `createdAt`
 * as TIMESTAMP in microseconds adjusted to UTC, like the warehouse's timestamptz; everything else as
 * UTF8 text), then `data` (the whole record as stored, JSON), so no field the service
 * sends is lost; a claim line: `op, run_id, claim_id, line_no` (from 1), `code`, `amount`, `data`. Written in
 * row groups of {@link ROW_GROUP} rows, hashed as written, fsynced; the same runs give the same
 * bytes.
 */
import { ByteWriter, ParquetWriter } from "hyparquet-writer";
import { createHash } from "node:crypto";
import { closeSync, fsyncSync, openSync, writeSync } from "node:fs";
import { join } from "node:path";
import { childItems } from "../csv/csv-format.js";
import { ChildLists } from "../files/layout.js";
import type { FileFormat } from "../files/folder-sink.js";
import type { ManifestFile } from "../files/manifest.js";
import type { Delta } from "../run-deltas.js";
import { DECIMAL_PRECISION, DECIMAL_SCALE } from "../typed-fields.js";
import { childParquetColumns, parquetColumns, type ParquetColumn, type ParquetRow } from "./parquet-columns.js";

/** Rows per row group: bounds the memory a file of a million changes needs. */
export const ROW_GROUP = 50_000;

type SchemaElement = ConstructorParameters<typeof ParquetWriter>[0]["schema"][number];

export const parquetFormat: FileFormat = parquetWriterFormat((columns) => columns);

/**
 * The table layout's Parquet (files/table-layout.ts): the same files less the `run_id` column,
 * which the partition (`run_id=00000010/`) carries, so that an engine reading the partitions sees
 * one `run_id` and not two that could disagree.
 */
export const parquetTableFormat: FileFormat = parquetWriterFormat((columns) => columns.filter((c) => c.name !== "run_id"));

function parquetWriterFormat(pick: (columns: ParquetColumn[]) => ParquetColumn[]): FileFormat {
  return {
    name: "parquet",
    writeResource(dir, resource, deltas) {
      const files = [writeFile(dir, `${resource}.parquet`, pick(parquetColumns(resource)), rowsOf(deltas()))];
      const child = ChildLists[resource];
      if (child) files.push(writeFile(dir, `${child.file}.parquet`, pick(childParquetColumns(child)), childRowsOf(deltas(), child.field)));
      return files;
    },
  };
}

function* rowsOf(deltas: Iterable<Delta>): Iterable<ParquetRow> {
  for (const d of deltas) yield { d };
}

function* childRowsOf(deltas: Iterable<Delta>, field: string): Iterable<ParquetRow> {
  for (const d of deltas) {
    const items = childItems(d, field);
    for (let i = 0; i < items.length; i++) yield { d, item: items[i]!, index: i };
  }
}

function schemaOf<R>(columns: readonly ParquetColumn<R>[]): SchemaElement[] {
  const rep = (c: ParquetColumn<R>): "REQUIRED" | "OPTIONAL" => (c.required ? "REQUIRED" : "OPTIONAL");
  return [
    { name: "root", num_children: columns.length },
    ...columns.map((c): SchemaElement => {
      switch (c.type) {
        case "boolean":
          return { name: c.name, type: "BOOLEAN", repetition_type: rep(c) };
        case "int64":
          return { name: c.name, type: "INT64", repetition_type: rep(c) };
        case "date":
          return { name: c.name, type: "INT32", converted_type: "DATE", repetition_type: rep(c) };
        case "timestamp":
          // An instant: microseconds since the epoch, UTC, as the warehouse's timestamptz holds it.
          return { name: c.name, type: "INT64", converted_type: "TIMESTAMP_MICROS", logical_type: { type: "TIMESTAMP", isAdjustedToUTC: true, unit: "MICROS" }, repetition_type: rep(c) };
        case "decimal":
          return { name: c.name, type: "INT64", converted_type: "DECIMAL", scale: DECIMAL_SCALE, precision: DECIMAL_PRECISION, repetition_type: rep(c) };
        case "json":
          return { name: c.name, type: "BYTE_ARRAY", converted_type: "JSON", repetition_type: rep(c) };
        default:
          return { name: c.name, type: "BYTE_ARRAY", converted_type: "UTF8", repetition_type: rep(c) };
      }
    }),
  ];
}

/** One Parquet file `dir/name` of `rows` in row groups of `rowGroup` rows: its manifest entry (also the state export's writer, src/sinks/state/). */
export function writeFile<R>(dir: string, name: string, columns: readonly ParquetColumn<R>[], rows: Iterable<R>, rowGroup = ROW_GROUP): ManifestFile {
  const out = new HashingFileWriter(join(dir, name));
  try {
    const writer = new ParquetWriter({ writer: out, schema: schemaOf(columns), createdBy: "benefits-sync" });
    let batch: unknown[][] = columns.map(() => []);
    let count = 0;
    let total = 0;
    const flush = () => {
      if (count === 0) return;
      void writer.write({ columnData: columns.map((c, i) => ({ name: c.name, data: batch[i]! })), rowGroupSize: rowGroup });
      batch = columns.map(() => []);
      count = 0;
    };
    for (const row of rows) {
      for (let i = 0; i < columns.length; i++) batch[i]!.push(columns[i]!.value(row));
      count++;
      total++;
      if (count >= rowGroup) flush();
    }
    flush();
    void writer.finish();
    return { file: name, rows: total, sha256: out.close() };
  } finally {
    out.abandon();
  }
}

/**
 * hyparquet-writer's Writer over a file descriptor: it writes out every megabyte (as the library's
 * own file writer does), hashes what it writes, creates the file new with mode 0600, and fsyncs.
 */
class HashingFileWriter extends ByteWriter {
  private fd: number | undefined;
  private readonly hash = createHash("sha256");
  constructor(path: string) {
    super();
    this.fd = openSync(path, "wx", 0o600);
  }

  override ensure(size: number): void {
    if (this.index > 1 << 20) this.drain();
    super.ensure(size);
  }

  override finish(): void {
    this.drain();
  }

  /** Flush the rest, fsync, close; the file's SHA-256. */
  close(): string {
    this.drain();
    fsyncSync(this.fd!);
    closeSync(this.fd!);
    this.fd = undefined;
    return this.hash.digest("hex");
  }

  abandon(): void {
    if (this.fd !== undefined) closeSync(this.fd);
    this.fd = undefined;
  }

  private drain(): void {
    if (this.index === 0) return;
    const chunk = new Uint8Array(this.buffer, 0, this.index);
    this.hash.update(chunk);
    for (let off = 0; off < chunk.length; ) off += writeSync(this.fd!, chunk, off);
    this.index = 0;
  }
}

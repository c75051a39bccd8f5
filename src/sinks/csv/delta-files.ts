import type { Database } from "better-sqlite3";
import { createHash } from "node:crypto";
import { closeSync, fsyncSync, openSync, writeSync } from "node:fs";
import { join } from "node:path";
import { StoredResources, ViewColumns } from "../../store/resources.js";
import { runDeltas, type Delta } from "../run-deltas.js";
import { csvRow } from "./csv-row.js";
import { childLists, flatten } from "./flatten.js";
import type { ManifestFile } from "./manifest.js";

/**
 * Write the changes of `runs` as CSV files into `dir` (which must be new and empty): one file per
 * stored resource and one per child list (`claim_lines.csv`), always all of them, a header only
 * when nothing changed, so that a loader never takes "no changes" for "missing file". Columns:
 * `op, run_id, id`, every documented field (in its documented order), then any other field
 * (sorted), flattened with dots. Rows are streamed (two passes over the changes: the columns,
 * then the rows), and each file is fsynced before it is listed.
 */
export function writeDeltaFiles(db: Database, dir: string, runs: readonly number[]): ManifestFile[] {
  const files: ManifestFile[] = [];
  for (const resource of StoredResources) {
    const child = childLists[resource];
    const skip = new Set(child ? [child.field] : []);
    const documented = ViewColumns[resource];
    const others = new Set<string>();
    const childKeys = new Set<string>();
    for (const d of runDeltas(db, resource, runs)) {
      for (const k of Object.keys(flatten(d.data, skip))) others.add(k);
      if (child) for (const item of childItems(d, child.field)) for (const k of Object.keys(flatten(item))) childKeys.add(k);
    }
    others.delete("id");
    for (const k of documented) others.delete(k);
    const columns = [...documented, ...[...others].sort()];
    const childColumns = [...childKeys].sort();
    const main = new CsvFile(dir, `${resource}.csv`, ["op", "run_id", "id", ...columns]);
    const sub = child ? new CsvFile(dir, `${child.file}.csv`, ["op", "run_id", child.parentColumn, "index", ...childColumns]) : undefined;
    try {
      for (const d of runDeltas(db, resource, runs)) {
        const fields = flatten(d.data, skip);
        main.row([d.op, String(d.runId), d.id, ...columns.map((c) => fields[c] ?? "")]);
        if (child && sub) {
          childItems(d, child.field).forEach((item, i) => {
            const f = flatten(item);
            sub.row([d.op, String(d.runId), d.id, String(i), ...childColumns.map((c) => f[c] ?? "")]);
          });
        }
      }
      files.push(main.close());
      if (sub) files.push(sub.close());
    } finally {
      main.abandon();
      sub?.abandon();
    }
  }
  return files;
}

function childItems(d: Delta, field: string): Record<string, unknown>[] {
  const items = d.data[field];
  if (!Array.isArray(items)) return [];
  return items.map((item: unknown) => (item && typeof item === "object" && !Array.isArray(item) ? (item as Record<string, unknown>) : { value: item }));
}

/** A CSV file written in chunks, hashed as it goes, fsynced on close. */
class CsvFile {
  private fd: number | undefined;
  private readonly hash = createHash("sha256");
  private buffered: string[] = [];
  private size = 0;
  private rows = 0;
  constructor(
    dir: string,
    private readonly name: string,
    header: readonly string[],
  ) {
    this.fd = openSync(join(dir, name), "wx", 0o600);
    this.add(csvRow(header));
  }

  row(fields: readonly string[]): void {
    this.rows++;
    this.add(csvRow(fields));
  }

  close(): ManifestFile {
    this.flush();
    fsyncSync(this.fd!);
    closeSync(this.fd!);
    this.fd = undefined;
    return { file: this.name, rows: this.rows, sha256: this.hash.digest("hex") };
  }

  /** Close the descriptor if `close` did not (an error on the way). */
  abandon(): void {
    if (this.fd !== undefined) closeSync(this.fd);
    this.fd = undefined;
  }

  private add(text: string): void {
    this.buffered.push(text);
    this.size += text.length;
    if (this.size >= 1 << 16) this.flush();
  }

  private flush(): void {
    if (this.buffered.length === 0) return;
    const chunk = Buffer.from(this.buffered.join(""), "utf8");
    this.buffered = [];
    this.size = 0;
    this.hash.update(chunk);
    for (let off = 0; off < chunk.length; ) off += writeSync(this.fd!, chunk, off);
  }
}

import type { Database } from "better-sqlite3";
import { stringify } from "csv-stringify/sync";
import { createHash, randomBytes } from "node:crypto";
import { existsSync, mkdirSync, renameSync, rmSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { StoredResources, ViewColumns } from "../../store/resources.js";
import { deliveryRuns, runDeltas } from "../run-deltas.js";
import { childLists, flatten } from "./flatten.js";

export interface ManifestFile {
  readonly file: string;
  readonly rows: number;
  readonly sha256: string;
}

export interface RunCsvResult {
  readonly dir: string;
  readonly files: readonly ManifestFile[];
}

/**
 * Write run N's deltas as CSV (RFC 4180, UTF-8, a header row) under `DIR/<run_id>/`: one file
 * per resource with changes, columns `op, run_id, id` then the record's fields flattened with
 * dots; a claim's lines go to `claim_lines.csv` with the claim's id; deletes carry the last known
 * values. `manifest.json` lists each file with its row count and SHA-256.
 *
 * The directory appears complete or not at all: everything is written to a hidden sibling, then
 * renamed into place. Exporting the same run twice gives the same bytes.
 */
export function writeRunCsv(db: Database, runId: number, outDir: string): RunCsvResult {
  const runs = deliveryRuns(db, runId);
  const finalDir = join(outDir, String(runId));
  mkdirSync(outDir, { recursive: true });
  const tmp = join(outDir, `.${runId}.tmp-${randomBytes(4).toString("hex")}`);
  mkdirSync(tmp, { mode: 0o700 });
  try {
    const files: ManifestFile[] = [];
    const write = (name: string, header: string[], rows: string[][]) => {
      if (rows.length === 0) return;
      const text = stringify([header, ...rows], { record_delimiter: "\r\n" });
      writeFileSync(join(tmp, name), text, { mode: 0o600 });
      files.push({ file: name, rows: rows.length, sha256: createHash("sha256").update(text).digest("hex") });
    };
    for (const resource of StoredResources) {
      const child = childLists[resource];
      const skip = new Set(child ? [child.field] : []);
      const flat: FlatRow[] = [];
      const childRows: FlatRow[] = [];
      const keys = new Set<string>();
      for (const d of runDeltas(db, resource, runs)) {
        const fields = flatten(d.data, skip);
        delete fields.id;
        for (const k of Object.keys(fields)) keys.add(k);
        flat.push({ base: [d.op, String(d.runId), d.id], fields });
        if (child) {
          const items = Array.isArray(d.data[child.field]) ? (d.data[child.field] as Record<string, unknown>[]) : [];
          items.forEach((item, i) => {
            childRows.push({ base: [d.op, String(d.runId), d.id, String(i)], fields: flatten(item && typeof item === "object" ? item : { value: item }) });
          });
        }
      }
      // Documented fields first, in their documented order; any others after, sorted.
      const documented = ViewColumns[resource].filter((c) => keys.has(c));
      const columns = [...documented, ...[...keys].filter((k) => !documented.includes(k)).sort()];
      write(`${resource}.csv`, ["op", "run_id", "id", ...columns], rowsOf(flat, columns));
      if (child) {
        const childColumns = [...new Set(childRows.flatMap((r) => Object.keys(r.fields)))].sort();
        write(`${child.file}.csv`, ["op", "run_id", child.parentColumn, "index", ...childColumns], rowsOf(childRows, childColumns));
      }
    }
    writeFileSync(join(tmp, "manifest.json"), `${JSON.stringify({ runId, runs, files }, null, 2)}\n`, { mode: 0o600 });
    if (existsSync(finalDir)) rmSync(finalDir, { recursive: true, force: true });
    renameSync(tmp, finalDir);
    return { dir: finalDir, files };
  } catch (e) {
    rmSync(tmp, { recursive: true, force: true });
    throw e;
  }
}

interface FlatRow {
  base: string[];
  fields: Record<string, string>;
}

const rowsOf = (rows: readonly FlatRow[], columns: readonly string[]): string[][] => rows.map((r) => [...r.base, ...columns.map((c) => r.fields[c] ?? "")]);

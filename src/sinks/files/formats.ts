import type { Database } from "better-sqlite3";
import { resolve } from "node:path";
import type { DeliveryOutcome } from "../ledger.js";
import { UsageError } from "../../input-errors.js";
import { checkExportable, deliverToSink } from "../sink.js";
import { folderSink, writeFolder, type DeltaFolder, type FileFormat, type FileFormatName } from "./folder-sink.js";
import type { LayoutName } from "./table-layout.js";

/** A format by name; Parquet's writer is loaded only when asked for. */
export async function fileFormat(name: FileFormatName): Promise<FileFormat> {
  switch (name) {
    case "csv":
      return (await import("../csv/csv-format.js")).csvFormat;
    case "jsonl":
      return (await import("../jsonl/jsonl-format.js")).jsonlFormat;
    case "parquet":
      return (await import("../parquet/parquet-format.js")).parquetFormat;
  }
}

/** The table layout's format (files/table-layout.ts): Parquet without the `run_id` column its partitions carry. */
export async function tablesFormat(): Promise<FileFormat> {
  return (await import("../parquet/parquet-format.js")).parquetTableFormat;
}

/** The outcome of a folder delivery, with the (absolute) output directory it was for. */
export type FolderDelivery = DeliveryOutcome<DeltaFolder> & { readonly outDir: string; readonly format: FileFormatName };

/**
 * Deliver to the folder `dir` each run it has not received, up to run `forRun`, as its own
 * `dir/<run, 8 digits>/`, oldest first: each folder holds exactly that run's changes, byte-identical to
 * `export --run <run>` (what `sync --out DIR` does after a successful run). A failed write stops
 * there: that run and the later ones stay pending and go with the next delivery; see
 * src/sinks/ledger.ts (deliverEach).
 *
 * The crash rule, per run: a delivery left pending by a process that died is settled first by
 * looking at its folder. If `dir/<run, 8 digits>/` is complete (its manifest lists that run and format, and
 * every file matches its hash), the crash came after the rename: it is recorded delivered and
 * nothing is sent twice. Otherwise it is recorded failed and the run is written again.
 *
 * @example const outcome = await deliverFolder(db, "/data/deltas", "csv", report.runId);
 */
export async function deliverFolder(db: Database, dir: string, format: FileFormatName, forRun: number, now?: () => Date): Promise<FolderDelivery> {
  const abs = resolve(dir);
  const sink = folderSink(abs, await fileFormat(format));
  return { ...(await deliverToSink(db, sink, forRun, now)), outDir: abs, format };
}

/**
 * (Re)write exactly the changes run N recorded under `outDir/<N, 8 digits>/` (`export --run N --out DIR`),
 * or with `layout` "tables" as the partitions `outDir/<table>/run_id=<N, 8 digits>/` and `outDir/_manifests/<N>.json`:
 * the same run gives the same bytes each time; the ledger is neither read nor changed.
 *
 * @example await exportFolder(db, 7, "exports", "csv") // exports/00000007/{designs,...,claim_lines}.csv + manifest.json
 */
export async function exportFolder(db: Database, runId: number, outDir: string, format: FileFormatName = "csv", layout: LayoutName = "folder"): Promise<DeltaFolder> {
  if (layout === "tables") {
    checkTablesFormat(format);
    checkExportable(db, runId);
    return (await import("./tables-sink.js")).writeTables(db, outDir, await tablesFormat(), { folderRun: runId, runs: [runId] });
  }
  const f = await fileFormat(format);
  checkExportable(db, runId);
  return writeFolder(db, outDir, f, { folderRun: runId, runs: [runId] });
}

/** The table layout is Parquet's: a usage error (exit 2) for another format. */
export function checkTablesFormat(format: FileFormatName): void {
  if (format !== "parquet") {
    throw new UsageError([
      `--layout tables: the table layout is written as Parquet (typed columns an engine reads as a table), not ${format}; give --format parquet, or leave --layout out for run folders of ${format}`,
    ]);
  }
}

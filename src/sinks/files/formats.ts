import type { Database } from "better-sqlite3";
import { resolve } from "node:path";
import type { DeliveryOutcome } from "../ledger.js";
import { checkExportable, deliverToSink } from "../sink.js";
import { folderSink, writeFolder, type DeltaFolder, type FileFormat, type FileFormatName } from "./folder-sink.js";

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
 * (Re)write exactly the changes run N recorded under `outDir/<N, 8 digits>/` (`export --run N --out DIR`):
 * the same run gives the same bytes each time; the ledger is neither read nor changed.
 *
 * @example await exportFolder(db, 7, "exports", "csv") // exports/00000007/{designs,...,claim_lines}.csv + manifest.json
 */
export async function exportFolder(db: Database, runId: number, outDir: string, format: FileFormatName = "csv"): Promise<DeltaFolder> {
  const f = await fileFormat(format);
  checkExportable(db, runId);
  return writeFolder(db, outDir, f, { folderRun: runId, runs: [runId] });
}

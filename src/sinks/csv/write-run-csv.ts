import type { Database } from "better-sqlite3";
import { writeFolder, type DeltaFolder } from "../files/folder-sink.js";
import { checkExportable } from "../sink.js";
import { csvFormat } from "./csv-format.js";

export type { ManifestFile } from "../files/manifest.js";
/** A run's CSV deltas in place. */
export type RunCsvResult = DeltaFolder;

/**
 * (Re)write exactly the changes run N recorded as CSV under `outDir/<N>/` (what `benefits-sync
 * export --run N --out DIR` does): any finished run, a failed one included. The same run gives the
 * same bytes each time. It is a re-export: the delivery ledger is neither read nor changed.
 * A ConfigError for an unknown run or one still running; an OutputError for a path problem.
 *
 * @example writeRunCsv(db, 7, "exports") // exports/00000007/{designs,...,claim_lines}.csv + manifest.json
 */
export function writeRunCsv(db: Database, runId: number, outDir: string): RunCsvResult {
  checkExportable(db, runId);
  return writeFolder(db, outDir, csvFormat, { folderRun: runId, runs: [runId] });
}

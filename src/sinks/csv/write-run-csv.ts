import type { Database } from "better-sqlite3";
import { ConfigError } from "../../errors.js";
import { writeCsvFolder, type CsvFolder } from "./csv-folder.js";

export type { ManifestFile } from "./manifest.js";
/** A run's CSV deltas in place. */
export type RunCsvResult = CsvFolder;

/**
 * (Re)write exactly the changes run N recorded as CSV under `outDir/<N>/` (what `benefits-sync
 * export --run N --out DIR` does): any finished run, a failed one included. The same run gives the
 * same bytes each time. It is a re-export: the delivery ledger is neither read nor changed.
 * A ConfigError for an unknown run or one still running; an OutputError for a path problem.
 *
 * @example writeRunCsv(db, 7, "exports") // exports/7/{designs,...,claim_lines}.csv + manifest.json
 */
export function writeRunCsv(db: Database, runId: number, outDir: string): RunCsvResult {
  const status = db.prepare("SELECT status FROM _runs WHERE run_id = ?").pluck().get(runId) as string | undefined;
  if (status === undefined) throw new ConfigError([`run ${runId}: no run ${runId} in this snapshot; \`benefits-sync runs\` lists them`]);
  if (status === "running") throw new ConfigError([`run ${runId}: it is still running, so its changes are not complete; export it once it has finished`]);
  return writeCsvFolder(db, outDir, runId, [runId]);
}

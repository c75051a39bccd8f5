import type { Database } from "better-sqlite3";
import { folderOutput } from "../files/folder-sink.js";
import { deliverFolder, type FolderDelivery } from "../files/formats.js";

/** The outcome of a CSV delivery, with the (absolute) output directory it was for. */
export type CsvDelivery = FolderDelivery;

/** A CSV output's identity in the ledger: `csv:` and the absolute directory. */
export const csvOutput = (dir: string): string => folderOutput("csv", dir);

/** {@link deliverFolder} in CSV: what `sync --out DIR` does by default. */
export const deliverCsv = (db: Database, dir: string, forRun: number, now?: () => Date): Promise<CsvDelivery> => deliverFolder(db, dir, "csv", forRun, now);

import type { Database } from "better-sqlite3";
import { join, resolve } from "node:path";
import { redact } from "../../errors.js";
import { deliver, settleInterrupted, type DeliveryOutcome } from "../ledger.js";
import { writeCsvFolder, type CsvFolder } from "./csv-folder.js";
import { readCompleteFolder, sameRuns } from "./manifest.js";

/** The outcome of a CSV delivery, with the (absolute) output directory it was for. */
export type CsvDelivery = DeliveryOutcome<CsvFolder> & { readonly outDir: string };

/** A CSV output's identity in the ledger: `csv:` and the absolute directory. */
export const csvOutput = (dir: string): string => `csv:${resolve(dir)}`;

/**
 * Deliver to the CSV folder `dir` every change it has not received, up to run `forRun`, as
 * `dir/<forRun>/` (each row keeps its own run_id; the manifest lists the runs). What `sync --out
 * DIR` does after a successful run. A failed write is a failed delivery (its runs stay pending and
 * ride with the next one); see {@link deliver}.
 *
 * The crash rule: a delivery left pending by a process that died is settled first by looking at
 * its folder. If `dir/<for_run>/` is complete (its manifest lists the same runs and every file
 * matches its hash), the crash came after the rename: it is recorded delivered and nothing is
 * sent twice. Otherwise the crash came before (no folder; a hidden `.N.tmp-*` may be left) or the
 * folder did not survive whole: it is recorded failed and its runs go with this delivery.
 *
 * @example const outcome = await deliverCsv(db, "/data/deltas", report.runId);
 */
export async function deliverCsv(db: Database, dir: string, forRun: number, now?: () => Date): Promise<CsvDelivery> {
  const abs = resolve(dir);
  const output = csvOutput(abs);
  try {
    settleInterrupted(
      db,
      output,
      (d) => {
        const m = readCompleteFolder(join(abs, String(d.forRun)));
        return m !== undefined && m.runId === d.forRun && sameRuns(m.runs, d.runs);
      },
      now,
    );
    return { ...(await deliver(db, output, forRun, (runs) => writeCsvFolder(db, abs, forRun, runs), now)), outDir: abs };
  } catch (e) {
    // The ledger itself failed (the snapshot busy or unwritable): nothing was claimed or written.
    return { status: "failed", runs: [], outDir: abs, error: { code: "LEDGER", message: redact(e instanceof Error ? e.message : String(e)) } };
  }
}

import type { Database } from "better-sqlite3";
import { closeSync, existsSync, fsyncSync, mkdtempSync, openSync, renameSync, rmSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { OutputError, explainFsError } from "../output-error.js";
import { prepareOutputDir } from "../output-dir.js";
import { writeDeltaFiles } from "./delta-files.js";
import { MANIFEST, manifestText, readCompleteFolder, sameRuns, type ManifestFile } from "./manifest.js";

/** A deltas folder in place: `dir` is `<output>/<runId>`. */
export interface CsvFolder {
  readonly dir: string;
  readonly runId: number;
  /** The runs whose changes it carries (ascending). */
  readonly runs: readonly number[];
  readonly files: readonly ManifestFile[];
}

/**
 * Write the changes of `runs` as `outDir/<folderRun>/` (files per {@link writeDeltaFiles}, then
 * `manifest.json`). The folder appears complete or not at all: it is written as a hidden sibling,
 * fsynced, then renamed into place. A folder already there is replaced only when it is a complete
 * deltas folder of the same runs (so the bytes do not change); anything else there is refused, so
 * that a delivery of other runs (or a stranger's folder) is never lost.
 *
 * @example writeCsvFolder(db, "/data/deltas", 7, [6, 7]) // -> /data/deltas/7/ with runs [6, 7]
 */
export function writeCsvFolder(db: Database, outDir: string, folderRun: number, runs: readonly number[]): CsvFolder {
  const parent = prepareOutputDir(outDir);
  const finalDir = join(parent, String(folderRun));
  const replacing = existsSync(finalDir);
  if (replacing) {
    const there = readCompleteFolder(finalDir);
    if (!there) {
      throw new OutputError(
        parent,
        `${finalDir} exists and is not a deltas folder written whole by benefits-sync (no manifest.json, or one its files do not match)`,
        `move ${finalDir} away (or delete it if nothing in it is needed), or choose another output directory (--out)`,
      );
    }
    if (there.runId !== folderRun || !sameRuns(there.runs, runs)) {
      throw new OutputError(
        parent,
        `${finalDir} holds the deltas of runs ${there.runs.join(", ")}${there.runs.length > 1 ? " (a delivery made by sync --out)" : ""}, not of runs ${runs.join(", ")}`,
        `choose another output directory (--out), or move ${finalDir} away first`,
      );
    }
  }
  let tmp: string | undefined;
  try {
    tmp = mkdtempSync(join(parent, `.${folderRun}.tmp-`));
    const files = writeDeltaFiles(db, tmp, runs);
    writeFileSync(join(tmp, MANIFEST), manifestText({ runId: folderRun, runs, files }), { mode: 0o600, flush: true });
    fsyncDir(tmp);
    if (replacing) {
      // Same runs, same bytes: the old folder goes aside only once the new one is complete.
      const old = `${tmp}.old`;
      renameSync(finalDir, old);
      renameSync(tmp, finalDir);
      rmSync(old, { recursive: true, force: true });
    } else {
      renameSync(tmp, finalDir);
    }
    tmp = undefined;
    // Best effort: the rename is done; a file system that cannot fsync a directory still has it.
    try {
      fsyncDir(parent);
    } catch {
      /* ignored */
    }
    return { dir: finalDir, runId: folderRun, runs: [...runs], files };
  } catch (e) {
    if (tmp) rmSync(tmp, { recursive: true, force: true });
    if (e instanceof OutputError) throw e;
    throw explainFsError(parent, (e as NodeJS.ErrnoException).path ?? parent, e);
  }
}

function fsyncDir(dir: string): void {
  const fd = openSync(dir, "r");
  try {
    fsyncSync(fd);
  } finally {
    closeSync(fd);
  }
}

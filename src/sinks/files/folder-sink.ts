/**
 * A folder of delta files as a sink: `DIR/00000010/` for run 10 (the id zero-padded, run-folder-name.ts) with
 * one file per resource (and per child list) in one format, and `manifest.json`. The folder appears complete or not at all: it is
 * written as a hidden sibling, fsynced, then renamed into place. A folder already there is
 * replaced only when it is a complete deltas folder of the same runs and format (so the bytes do
 * not change; or our own folder of those runs that a power loss left with a file not matching its
 * manifest); anything else there is refused, so that a folder of other runs (or a stranger's
 * folder) is never lost. A folder of another snapshot's runs is refused whole (folder-owner.ts),
 * and the hidden folders of writers that died are cleared (leftovers.ts).
 */
import { existsSync, mkdtempSync, renameSync, rmSync, writeFileSync } from "node:fs";
import { join, resolve } from "node:path";
import type { Database } from "better-sqlite3";
import { StoredResources, type StoredResource } from "../../store/schema/resources.js";
import { runDeltas } from "../run-deltas.js";
import { runFacts, type RunFacts } from "../run-facts.js";
import { OutputError } from "../output-error.js";
import { fsStep, fsyncDir } from "./fs-step.js";
import { ensureOutputDir } from "../output-dir.js";
import type { DeliveryPlan, DeltaReader, Sink, SinkSession } from "../sink.js";
import { runFolderName, runFolderNames } from "./run-folder-name.js";
import { applyPermissions, applyToOutputDir, type FolderPermissions } from "./folder-permissions.js";
import { MANIFEST, manifestText, readCompleteFolder, readManifest, sameRuns, type ManifestFile } from "./manifest.js";
import { checkFolderSnapshot } from "./folder-owner.js";
import { clearLeftovers, markWriting, tempPrefix } from "./leftovers.js";
import { checkOneLayout, type LayoutName } from "./table-layout.js";

export const FileFormatNames = ["csv", "jsonl", "parquet"] as const;
export type FileFormatName = (typeof FileFormatNames)[number];

/** How one format writes a resource's changes into the (new, hidden) folder. */
export interface FileFormat {
  readonly name: FileFormatName;
  /** Write `resource`'s files into `dir`, each fsynced; always at least one file, even with no changes. */
  writeResource(dir: string, resource: StoredResource, deltas: DeltaReader): ManifestFile[];
}

/** A deltas folder in place: `dir` is `<output>/<runId zero-padded>`. */
export interface DeltaFolder {
  readonly dir: string;
  readonly runId: number;
  readonly format: FileFormatName;
  /** The runs whose changes it carries (ascending). */
  readonly runs: readonly number[];
  readonly files: readonly ManifestFile[];
}

/**
 * A folder output's identity in the ledger: the format and the absolute directory (`csv:/data/deltas`);
 * in the table layout (table-layout.ts), `parquet-tables:/data/lake`, another output than its run folders.
 */
export const folderOutput = (format: FileFormatName, dir: string, layout: LayoutName = "folder"): string => `${format}${layout === "tables" ? "-tables" : ""}:${resolve(dir)}`;
/** A folder output as messages name it (`/data/deltas (csv)`, `/data/lake (parquet tables)`). */
export const folderDescribe = (format: FileFormatName, dir: string, layout: LayoutName = "folder"): string => `${resolve(dir)} (${format}${layout === "tables" ? " tables" : ""})`;

/**
 * @example await deliverToSink(db, folderSink("/data/deltas", csvFormat), runId) // -> /data/deltas/00000010/ for run 10
 */
export function folderSink(outDir: string, format: FileFormat, perms?: FolderPermissions): Sink<DeltaFolder> {
  const abs = resolve(outDir);
  return {
    output: folderOutput(format.name, abs),
    describe: folderDescribe(format.name, abs),
    perRun: true,
    arrived(d) {
      return runFolderNames(d.forRun).some((name) => {
        const m = readCompleteFolder(join(abs, name));
        return m !== undefined && m.runId === d.forRun && sameRuns(m.runs, d.runs) && m.format === format.name;
      });
    },
    prepare(snapshotId) {
      // Every run folder read: a folder another snapshot already mixed into is found too.
      checkFolderSnapshot(abs, snapshotId);
      // Before the ledger records a delivery: a DIR of tables is refused (open checks again, for an export).
      checkOneLayout(abs, "folder");
      clearLeftovers(abs);
    },
    open: (plan) => openFolder(abs, format, plan.folderRun, plan.runs, plan.facts!, perms),
  };
}

/** The folder sink's session, synchronous all through. */
interface FolderSession extends SinkSession<DeltaFolder> {
  write(resource: StoredResource, deltas: DeltaReader): void;
  commit(): DeltaFolder;
  close(): void;
}

function openFolder(outDir: string, format: FileFormat, folderRun: number, runs: readonly number[], facts: RunFacts, perms?: FolderPermissions): FolderSession {
  const out = ensureOutputDir(outDir);
  const parent = out.path;
  // Before anything in it changes; the first folder that names a snapshot decides (prepare read them all).
  checkFolderSnapshot(parent, facts.snapshotId, { first: true });
  // Before any run folder appears in it: a loader must be able to enter DIR to reach them.
  fsStep(parent, () => applyToOutputDir(parent, perms, out.created));
  const finalDir = join(parent, runFolderName(folderRun));
  checkOneLayout(parent, "folder");
  const replacing = existsSync(finalDir);
  if (replacing) checkReplaceable(parent, finalDir, format.name, folderRun, runs);
  clearLeftovers(parent);
  let tmp: string | undefined = fsStep(parent, () => mkdtempSync(tempPrefix(parent, folderRun)));
  markWriting(tmp, true);
  const files: ManifestFile[] = [];
  return {
    write(resource, deltas) {
      files.push(...fsStep(parent, () => format.writeResource(tmp!, resource, deltas)));
    },
    commit() {
      fsStep(parent, () => {
        writeFileSync(join(tmp!, MANIFEST), manifestText({ runId: folderRun, format: format.name, runs, files }, facts), { mode: 0o600, flush: true });
        applyPermissions(tmp!, perms);
        fsyncDir(tmp!);
        if (replacing) {
          // Same runs, same bytes: the old folder goes aside only once the new one is complete.
          const old = `${tmp}.old`;
          renameSync(finalDir, old);
          renameSync(tmp!, finalDir);
          rmSync(old, { recursive: true, force: true });
        } else {
          renameSync(tmp!, finalDir);
        }
      });
      markWriting(tmp!, false);
      tmp = undefined;
      // Best effort: the rename is done; a file system that cannot fsync a directory still has it.
      try {
        fsyncDir(parent);
      } catch {
        /* ignored */
      }
      return { dir: finalDir, runId: folderRun, format: format.name, runs: [...runs], files };
    },
    close() {
      if (tmp) {
        rmSync(tmp, { recursive: true, force: true });
        markWriting(tmp, false);
      }
      tmp = undefined;
    },
  };
}

function checkReplaceable(parent: string, finalDir: string, format: FileFormatName, folderRun: number, runs: readonly number[]): void {
  // Our own folder of these very runs that a power loss left with a file not matching its
  // manifest: what is written now is what it should have held.
  const own = readManifest(finalDir);
  const there = readCompleteFolder(finalDir) ?? (own && own.runId === folderRun && sameRuns(own.runs, runs) && own.format === format ? own : undefined);
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
  if (there.format !== format) {
    throw new OutputError(parent, `${finalDir} holds ${there.format} files, not ${format}`, `give each format its own output directory (--out)`);
  }
}

/**
 * Write the changes of `plan.runs` as `outDir/<plan.folderRun>/` in one go (the folder sink's
 * session is synchronous): open, every stored resource, commit, close.
 *
 * @example writeFolder(db, "/data/deltas", csvFormat, { folderRun: 7, runs: [6, 7] }) // -> /data/deltas/00000007/
 */
export function writeFolder(db: Database, outDir: string, format: FileFormat, plan: DeliveryPlan): DeltaFolder {
  const session = openFolder(resolve(outDir), format, plan.folderRun, plan.runs, runFacts(db, plan.folderRun));
  try {
    for (const resource of StoredResources) session.write(resource, () => runDeltas(db, resource, plan.runs));
    return session.commit();
  } finally {
    session.close();
  }
}

/**
 * The table layout as a sink (names: table-layout.ts): each run's files staged in a hidden folder
 * of DIR (`DIR/.10.tmp-…`, cleared like a run folder's when its writer dies, leftovers.ts) in
 * their final shape, `members/run_id=00000010/part-00000.parquet` and
 * `_manifests/00000010.json`, then made visible by ONE function, {@link publishLocal}: the
 * partitions first (a rename each), the manifest last, as the run's commit marker. The ledger is
 * a run folder's: each run once, a failed delivery pending, and a delivery whose writer died
 * before its manifest is written again (`arrived` reads the manifest and checks every file's hash).
 *
 * The publish step is a parameter, so that another store (object storage) publishes the same
 * staged tree: every file under it but the manifest, then the manifest.
 */
import { createHash } from "node:crypto";
import { existsSync, mkdirSync, mkdtempSync, readdirSync, readFileSync, renameSync, rmSync, writeFileSync } from "node:fs";
import { basename, extname, join, resolve } from "node:path";
import type { Database } from "better-sqlite3";
import { StoredResources, type StoredResource } from "../../store/schema/resources.js";
import { ensureOutputDir } from "../output-dir.js";
import { runDeltas } from "../run-deltas.js";
import { runFacts, type RunFacts } from "../run-facts.js";
import type { DeliveryPlan, DeltaReader, Sink, SinkSession } from "../sink.js";
import { folderDescribe, folderOutput, type DeltaFolder, type FileFormat } from "./folder-sink.js";
import { applyPermissionsTree, applyToOutputDir, type FolderPermissions } from "./folder-permissions.js";
import { checkFolderSnapshot } from "./folder-owner.js";
import { fsStep, fsyncDir } from "./fs-step.js";
import { clearLeftovers, markWriting, tempPrefix } from "./leftovers.js";
import { manifestText, type ManifestFile } from "./manifest.js";
import { MANIFESTS, PARTITION_COLUMN, checkOneLayout, checkPartitionReplaceable, partFile, partitionDir, tableManifest, tablesArrived } from "./table-layout.js";

/**
 * A run staged whole: `stageDir` holds, under the same relative paths, what `outDir` is to hold;
 * `files` are the data files (`members/run_id=00000010/part-00000.parquet`) with their hashes.
 */
export interface StagedRun extends Pick<DeltaFolder, "runId" | "files"> {
  readonly stageDir: string;
  readonly outDir: string;
  /** The partition folders (`members/run_id=00000010`), relative. */
  readonly partitions: readonly string[];
  /** The manifest (`_manifests/00000010.json`), relative: published last. */
  readonly manifest: string;
}

/** Make a staged run visible: the one step another store replaces. */
export type Publish = (staged: StagedRun) => void;

/**
 * @example await deliverToSink(db, tablesSink("/data/lake", await tablesFormat()), runId) // /data/lake/members/run_id=00000010/...
 */
export function tablesSink(outDir: string, format: FileFormat, perms?: FolderPermissions, publish: Publish = publishLocal): Sink<DeltaFolder> {
  const abs = resolve(outDir);
  return {
    output: folderOutput(format.name, abs, "tables"),
    describe: folderDescribe(format.name, abs, "tables"),
    perRun: true,
    arrived: (d) => tablesArrived(abs, d.forRun, d.runs, format.name),
    prepare(snapshotId) {
      checkFolderSnapshot(abs, snapshotId);
      checkOneLayout(abs, "tables");
      clearLeftovers(abs);
    },
    open: (plan) => openTables(abs, format, plan.folderRun, plan.runs, plan.facts!, perms, publish),
  };
}

interface TablesSession extends SinkSession<DeltaFolder> {
  write(resource: StoredResource, deltas: DeltaReader): void;
  commit(): DeltaFolder;
  close(): void;
}

function openTables(outDir: string, format: FileFormat, runId: number, runs: readonly number[], facts: RunFacts, perms: FolderPermissions | undefined, publish: Publish): TablesSession {
  if (runs.length !== 1 || runs[0] !== runId) throw new Error(`the table layout takes one run per delivery (run ${runId}, not runs ${runs.join(", ")})`);
  const out = ensureOutputDir(outDir);
  const parent = out.path;
  checkFolderSnapshot(parent, facts.snapshotId, { first: true });
  checkOneLayout(parent, "tables");
  fsStep(parent, () => applyToOutputDir(parent, perms, out.created));
  // Before anything is written: a partition of this run that is neither ours nor a dead writer's is refused.
  for (const table of tablesIn(parent)) checkPartitionReplaceable(parent, join(parent, partitionDir(table, runId)), runId, runs, format.name);
  clearLeftovers(parent);
  let tmp: string | undefined = fsStep(parent, () => mkdtempSync(tempPrefix(parent, runId)));
  markWriting(tmp, true);
  const files: ManifestFile[] = [];
  const partitions: string[] = [];
  return {
    write(resource, deltas) {
      fsStep(parent, () => {
        const flat = join(tmp!, ".flat");
        mkdirSync(flat, { recursive: true, mode: 0o700 });
        for (const f of format.writeResource(flat, resource, deltas)) {
          const part = partitionDir(basename(f.file, extname(f.file)), runId);
          mkdirSync(join(tmp!, part), { recursive: true, mode: 0o700 });
          const file = `${part}/${partFile(0, extname(f.file).slice(1))}`;
          renameSync(join(flat, f.file), join(tmp!, file));
          files.push({ ...f, file });
          partitions.push(part);
        }
        rmSync(flat, { recursive: true, force: true });
      });
    },
    commit() {
      const manifest = tableManifest(runId);
      fsStep(parent, () => {
        mkdirSync(join(tmp!, MANIFESTS), { mode: 0o700 });
        writeFileSync(join(tmp!, manifest), tablesManifestText(runId, format.name, runs, files, facts), { mode: 0o600, flush: true });
        applyPermissionsTree(tmp!, perms);
        publish({ stageDir: tmp!, outDir: parent, runId, partitions, files, manifest });
      });
      rmSync(tmp!, { recursive: true, force: true });
      markWriting(tmp!, false);
      tmp = undefined;
      return { dir: parent, runId, format: format.name, runs: [...runs], files };
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

/** The manifest of the table layout: a run folder's keys, with `layout` after `format`, each file by its path under DIR. */
function tablesManifestText(runId: number, format: string, runs: readonly number[], files: readonly ManifestFile[], facts: RunFacts): string {
  const m = JSON.parse(manifestText({ runId, format, runs, files }, facts)) as Record<string, unknown>;
  const keyed = Object.entries(m).flatMap(([k, v]) => (k === "format" ? [[k, v], ["layout", "tables"], ["partitionColumn", PARTITION_COLUMN]] : [[k, v]]));
  return `${JSON.stringify(Object.fromEntries(keyed), null, 2)}\n`;
}

/** The tables in DIR: its folders that are not hidden, not `_manifests`, not a run folder. */
function tablesIn(dir: string): string[] {
  return readdirSync(dir, { withFileTypes: true })
    .filter((e) => e.isDirectory() && !e.name.startsWith(".") && !e.name.startsWith("_"))
    .map((e) => e.name);
}

/**
 * Publish a staged run into a local DIR: each partition renamed into place (a table's folder
 * renamed whole when DIR has none yet), every folder fsynced, then the manifest. A partition
 * already there with the same files (a re-export: the same bytes) stays as it is; one that differs
 * (a writer killed before its manifest) is replaced.
 */
export function publishLocal(staged: StagedRun): void {
  publishPartitions(staged);
  publishManifest(staged);
}

/** The first half of {@link publishLocal}: every partition in place, no manifest yet. */
export function publishPartitions(staged: StagedRun): void {
  const { stageDir, outDir } = staged;
  for (const part of staged.partitions) {
    const table = part.split("/")[0]!;
    const target = join(outDir, part);
    if (!existsSync(join(outDir, table))) {
      renameSync(join(stageDir, table), join(outDir, table));
    } else if (!existsSync(target)) {
      renameSync(join(stageDir, part), target);
    } else if (!sameFiles(outDir, part, staged.files.filter((f) => f.file.startsWith(`${part}/`)))) {
      const old = join(stageDir, `.old-${table}`);
      renameSync(target, old);
      renameSync(join(stageDir, part), target);
      rmSync(old, { recursive: true, force: true });
    }
    fsyncDir(join(outDir, table));
  }
  fsyncDir(outDir);
}

/** The second half: the manifest, the run's commit marker. */
export function publishManifest(staged: StagedRun): void {
  const { stageDir, outDir } = staged;
  if (!existsSync(join(outDir, MANIFESTS))) renameSync(join(stageDir, MANIFESTS), join(outDir, MANIFESTS));
  else renameSync(join(stageDir, staged.manifest), join(outDir, staged.manifest));
  fsyncDir(join(outDir, MANIFESTS));
  // Best effort: the rename is done; a file system that cannot fsync a directory still has it.
  try {
    fsyncDir(outDir);
  } catch {
    /* ignored */
  }
}

/** Does the partition `part` of `outDir` hold exactly `files` (by name and hash)? */
function sameFiles(outDir: string, part: string, files: readonly ManifestFile[]): boolean {
  const names = readdirSync(join(outDir, part)).sort();
  const want = files.map((f) => f.file.slice(part.length + 1)).sort();
  if (names.length !== want.length || names.some((n, i) => n !== want[i])) return false;
  return files.every((f) => createHash("sha256").update(readFileSync(join(outDir, f.file))).digest("hex") === f.sha256);
}

/**
 * Write run `plan.folderRun` in the table layout in one go (`export --run N --out DIR --layout tables`).
 *
 * @example writeTables(db, "/data/lake", await tablesFormat(), { folderRun: 7, runs: [7] }) // /data/lake/members/run_id=00000007/...
 */
export function writeTables(db: Database, dir: string, format: FileFormat, plan: DeliveryPlan): DeltaFolder {
  const session = openTables(resolve(dir), format, plan.folderRun, plan.runs, runFacts(db, plan.folderRun), undefined, publishLocal);
  try {
    for (const resource of StoredResources) session.write(resource, () => runDeltas(db, resource, plan.runs));
    return session.commit();
  } finally {
    session.close();
  }
}

/**
 * One output, one snapshot. Run ids start at 1 in every snapshot, so a folder that received
 * snapshot A's runs must never receive snapshot B's: B's run 1 would replace A's `00000001/` (a
 * loader that read it never reads it again) or sit beside A's run 2 (a fresh loader mixes two
 * snapshots). A folder belongs to the snapshot whose id its run folders' manifests carry
 * (`snapshotId`), and its state and history exports' too; a delivery or an export (of deltas, state
 * or history) from another snapshot is refused before anything in the folder changes. A manifest without an id (layout 1, or an old snapshot exported
 * read-only) claims nothing.
 */
import { existsSync, readdirSync, readFileSync } from "node:fs";
import { join, resolve } from "node:path";
import { ConfigError } from "../../errors.js";
import { readManifest } from "./manifest.js";
import { MANIFESTS } from "./table-layout.js";

/** An output that belongs to another snapshot (exit 2: choose another output). */
export class OutputSnapshotError extends ConfigError {
  override readonly code = "OUTPUT_SNAPSHOT";
  constructor(problem: string) {
    super([problem]);
    // The problem alone: it is printed as a delivery's error, and by main after the command's name.
    this.message = this.problems[0]!;
  }
}

/**
 * The snapshots whose run folders (or table manifests) `dir` holds: id -> the first manifest (in run order) that
 * names it. With `first`, only the first folder that names a snapshot is read (what a folder
 * written whole by one snapshot needs; `all` finds a folder already mixed).
 */
export function folderSnapshots(dir: string, opts: { readonly first?: boolean } = {}): Map<string, string> {
  const out = new Map<string, string>();
  let names: string[];
  try {
    names = readdirSync(dir);
  } catch {
    return out; // no folder (yet): nobody's
  }
  // Run folders (`00000010/manifest.json`), and the table layout's manifests (`_manifests/00000010.json`).
  const manifests: { folder: string; name: string; run: number; state?: true }[] = names.filter((n) => /^\d+$/.test(n)).map((n) => ({ folder: join(dir, n), name: "manifest.json", run: Number(n) }));
  // State and history exports (`state-00000010/`, sinks/state/): their manifests name the snapshot too.
  for (const n of names) {
    const state = STATE_FOLDER.exec(n);
    if (state) manifests.push({ folder: join(dir, n), name: "manifest.json", run: Number(state[1]), state: true });
  }
  try {
    for (const n of readdirSync(join(dir, MANIFESTS))) if (/^\d+\.json$/.test(n)) manifests.push({ folder: join(dir, MANIFESTS), name: n, run: parseInt(n, 10) });
  } catch {
    // no tables
  }
  manifests.sort((a, b) => a.run - b.run);
  for (const { folder, name, state } of manifests) {
    const id = state ? stateSnapshotId(join(folder, name)) : readManifest(folder, name)?.snapshotId;
    if (typeof id !== "string" || out.has(id)) continue;
    out.set(id, join(folder, name));
    if (opts.first) break;
  }
  return out;
}

/** `state-00000010` / `history-00000010` (sinks/state/state-folder.ts names them). */
const STATE_FOLDER = /^(?:state|history)-(\d+)$/;

/** The snapshotId a state or history export's manifest carries (its own shape: no `runs`). */
function stateSnapshotId(path: string): unknown {
  try {
    return (JSON.parse(readFileSync(path, "utf8")) as { snapshotId?: unknown } | null)?.snapshotId;
  } catch {
    return undefined;
  }
}

/**
 * Refuse (an {@link OutputSnapshotError}) to write the deltas of snapshot `ours` into `dir` when
 * its run folders belong to another snapshot. `ours` undefined or null: a snapshot with no id yet
 * (a new one, or one an older benefits-sync made), which is never the folder's. Reads only.
 *
 * @example checkFolderSnapshot("/data/deltas", "3f2a…") // throws when /data/deltas/00000001/ is snapshot 9c41…'s
 */
export function checkFolderSnapshot(dir: string, ours: string | null | undefined, opts: { readonly first?: boolean; readonly db?: string } = {}): void {
  const abs = resolve(dir);
  const other = [...folderSnapshots(abs, opts)].find(([id]) => id !== ours);
  if (!other) return;
  throw ownerRefusal({ where: abs, id: other[0], manifest: other[1], ours, db: opts.db, instead: "a new folder (another --out DIR, or another sink dir" });
}

/**
 * The refusal of an output (`where`: a folder, an s3:// prefix) that belongs to snapshot `id`
 * (named by `manifest`) to snapshot `ours`. `instead`: where else to deliver, for the message.
 */
export function ownerRefusal(o: { where: string; id: string; manifest: string; ours: string | null | undefined; db?: string | undefined; instead: string }): OutputSnapshotError {
  const self = o.db ? `the snapshot ${o.db}` : "this snapshot";
  return new OutputSnapshotError(
    `${o.where} belongs to snapshot ${o.id} (the snapshotId in ${o.manifest}), and ${self} is ` +
      `${o.ours ? `snapshot ${o.ours}` : "another one (it has no id yet: it is new, or an older benefits-sync made it)"}: ` +
      "an output takes the runs of the snapshot that first delivered to it, since the run ids of two snapshots collide. Nothing was written. " +
      `Deliver ${o.ours ? `snapshot ${o.ours}` : "this snapshot"} to ${o.instead}; with --from-run N to start it at a later run), ` +
      `and leave ${o.where} to snapshot ${o.id}`,
  );
}

/** The id of the snapshot at `dbPath`; undefined for a missing file or one with no id yet. Reads only. */
export async function snapshotIdAt(dbPath: string): Promise<string | undefined> {
  if (dbPath === ":memory:" || !existsSync(dbPath)) return undefined;
  const { openDatabase } = await import("../../store/file/database.js");
  const db = openDatabase(dbPath, { readonly: true });
  try {
    return db.prepare("SELECT value FROM _meta WHERE key = 'snapshot_id'").pluck().get() as string | undefined;
  } catch {
    return undefined; // no _meta yet: an old file, given an id by its next run
  } finally {
    db.close();
  }
}

/**
 * Before a sync's run: refuse the folders `dirs` when they belong to another snapshot than the
 * one at `dbPath` (a missing file is a new snapshot), so that a sync pointed at the wrong output
 * records no run and writes nothing.
 */
export async function checkFoldersBefore(dbPath: string, dirs: readonly string[]): Promise<void> {
  if (dirs.length === 0) return;
  const ours = await snapshotIdAt(dbPath);
  for (const dir of dirs) checkFolderSnapshot(dir, ours, { db: dbPath });
}

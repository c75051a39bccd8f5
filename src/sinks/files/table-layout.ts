/**
 * The table layout's names, in one place (`--layout tables`, a folder sink's `"layout": "tables"`):
 * each file a run folder would hold becomes a partition of its own table, Hive-style,
 * `DIR/members/run_id=00000010/part-00000.parquet`, and the run's manifest is
 * `DIR/_manifests/00000010.json`, outside every table (a `members/*\/*.parquet` glob, an external
 * table's LOCATION `DIR/members/`, never sees it), written last as the run's commit marker. The
 * partition is the rows' only `run_id`: the files leave that column out (DuckDB, with
 * `hive_partitioning`, silently puts the partition's value over a column of the same name, and
 * Hive, Athena and BigQuery refuse a partition key that is also a column of the files).
 */
import { createHash } from "node:crypto";
import { readdirSync, readFileSync } from "node:fs";
import { join } from "node:path";
import { ConfigError } from "../../errors.js";
import { OutputError } from "../output-error.js";
import { readManifest, sameRuns, type Manifest } from "./manifest.js";
import { runFolderName } from "./run-folder-name.js";

export const LayoutNames = ["folder", "tables"] as const;
export type LayoutName = (typeof LayoutNames)[number];

/** The folder of the runs' manifests, beside the tables. */
export const MANIFESTS = "_manifests";
/** The partition column. */
export const PARTITION_COLUMN = "run_id";

/** `members/run_id=00000010` */
export const partitionDir = (table: string, runId: number): string => `${table}/${PARTITION_COLUMN}=${runFolderName(runId)}`;
/** A partition's n-th file: `part-00000.parquet`. */
export const partFile = (n: number, ext: string): string => `part-${String(n).padStart(5, "0")}.${ext}`;
/** `_manifests/00000010.json` */
export const tableManifest = (runId: number): string => `${MANIFESTS}/${runFolderName(runId)}.json`;

/** What a partition directory that a killed writer of ours left holds: part files only. */
const PART = /^part-\d{5}\.[a-z]+$/;

/** A run's table manifest as written (its files not checked); undefined when absent or not ours. */
export function readTableManifest(outDir: string, runId: number): Manifest | undefined {
  const dir = join(outDir, MANIFESTS);
  const m = readManifest(dir, `${runFolderName(runId)}.json`);
  return m && (m as { layout?: unknown }).layout === "tables" ? m : undefined;
}

/** The manifest of run `runId` when every file it lists is in place with its hash. */
export function readCompleteTables(outDir: string, runId: number): Manifest | undefined {
  const m = readTableManifest(outDir, runId);
  if (!m) return undefined;
  for (const f of m.files) {
    if (typeof f?.file !== "string" || f.file.split("/").some((p) => p === ".." || p === "") || f.file.includes("\\")) return undefined;
    try {
      if (createHash("sha256").update(readFileSync(join(outDir, f.file))).digest("hex") !== f.sha256) return undefined;
    } catch {
      return undefined;
    }
  }
  return m;
}

/** Did run `runId`'s delivery of `runs` in `format` reach `outDir` whole? */
export const tablesArrived = (outDir: string, runId: number, runs: readonly number[], format: string): boolean => {
  const m = readCompleteTables(outDir, runId);
  return m !== undefined && m.runId === runId && sameRuns(m.runs, runs) && m.format === format;
};

/**
 * May the partition `dir` (of run `runId`, in `outDir`) be replaced? When the run's manifest is
 * ours for these runs and format (a re-export: the same bytes), or when there is no manifest and
 * the directory holds only part files (what a writer killed before its manifest left). Anything
 * else is refused, so that nobody's files are lost.
 */
export function checkPartitionReplaceable(outDir: string, dir: string, runId: number, runs: readonly number[], format: string): void {
  const m = readTableManifest(outDir, runId);
  if (m) {
    if (m.runId === runId && sameRuns(m.runs, runs) && m.format === format) return;
    throw new OutputError(outDir, `${join(outDir, tableManifest(runId))} records runs ${m.runs.join(", ")} in ${m.format}, not runs ${runs.join(", ")} in ${format}`, `choose another output directory (--out), or move ${outDir} away first`);
  }
  let names: string[];
  try {
    names = readdirSync(dir);
  } catch {
    return;
  }
  const foreign = names.filter((n) => !PART.test(n));
  if (foreign.length === 0) return;
  throw new OutputError(
    outDir,
    `${dir} exists and holds files benefits-sync did not write (${foreign.slice(0, 3).join(", ")}), and no manifest claims it`,
    `move ${dir} away (or delete it if nothing in it is needed), or choose another output directory (--out)`,
  );
}

/** An output that holds the other layout than the one asked for (exit 2: give each layout its own output). */
export class OutputLayoutError extends ConfigError {
  override readonly code = "OUTPUT_LAYOUT";
  constructor(problem: string) {
    super([problem]);
    // The problem alone: it is printed as a delivery's error, and by main after the command's name.
    this.message = this.problems[0]!;
  }
}

/**
 * One output holds one layout, a folder or an S3 prefix alike: of the names directly in it
 * (`00000010`, `_manifests`; a prefix's sub-folders may end in `/`), the first that belongs to the
 * other layout than `layout`, or undefined. Run folders beside tables would be read as a table
 * named `00000010` by a glob over the output, and tables beside run folders as a run folder.
 *
 * @example otherLayoutEntry(["00000001", "00000002"], "tables") // "00000001"
 */
export function otherLayoutEntry(names: readonly string[], layout: LayoutName): string | undefined {
  const bare = names.map((n) => n.replace(/\/$/, ""));
  return layout === "tables" ? bare.find((n) => /^\d+$/.test(n)) : bare.find((n) => n === MANIFESTS);
}

/** The refusal of `layout` in `where` (a folder, an s3:// prefix) because it holds `entry` of the other layout. */
export function layoutRefusal(where: string, entry: string, layout: LayoutName): OutputLayoutError {
  const [theirs, ours] = layout === "tables" ? ["run folders (the folder layout)", "the table layout"] : ["tables (the table layout, _manifests/)", "run folders"];
  return new OutputLayoutError(
    `${where} holds ${theirs} (${where}/${entry}), and ${ours} was asked for: one output holds one layout. Nothing was written. ` +
      `Give each layout its own output (another --out, or another sink), or use --layout ${layout === "tables" ? "folder" : "tables"} here`,
  );
}

/** {@link otherLayoutEntry} for a local DIR: refuse (an OutputLayoutError) to write `layout` into a DIR that holds the other's. */
export function checkOneLayout(outDir: string, layout: LayoutName): void {
  let names: string[];
  try {
    names = readdirSync(outDir);
  } catch {
    return;
  }
  const other = otherLayoutEntry(names, layout);
  if (other !== undefined) throw layoutRefusal(outDir, other, layout);
}

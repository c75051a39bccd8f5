import { createHash } from "node:crypto";
import { readFileSync } from "node:fs";
import { join } from "node:path";
import type { RunFacts } from "../run-facts.js";
import { DICTIONARY_VERSION } from "../dictionary-columns.js";
import { LAYOUT_VERSION, ManifestKeys } from "./manifest-keys.js";

export const MANIFEST = "manifest.json";

export interface ManifestFile {
  readonly file: string;
  readonly rows: number;
  readonly sha256: string;
}

/**
 * `DIR/00000010/manifest.json` (run 10): the folder's run, its format, the layout and dictionary versions,
 * the snapshot's id, the runs whose changes it carries, the run's start, finish and walk, and each
 * file with its row count and SHA-256. Only what the snapshot recorded (no clock of its own): the
 * same runs always give the same bytes. Its keys: manifest-keys.ts.
 */
export interface Manifest {
  readonly runId: number;
  /** `csv`, `jsonl` or `parquet` (a manifest written before formats were named is `csv`). */
  readonly format: string;
  readonly runs: readonly number[];
  readonly files: readonly ManifestFile[];
  /** Absent from a folder an older version wrote (layout 1). */
  readonly layoutVersion?: number;
  readonly dictionaryVersion?: string;
  readonly snapshotId?: string;
  readonly startedAt?: string;
  readonly finishedAt?: string | null;
  readonly walked?: RunFacts["walked"];
}

/** The manifest's text, keys in a fixed order. */
export function manifestText(m: Omit<Manifest, "layoutVersion" | "dictionaryVersion">, facts: RunFacts): string {
  const { snapshotId, startedAt, finishedAt, walked } = facts;
  const files = m.files.map((f) => ({ file: f.file, rows: f.rows, sha256: f.sha256 }));
  const values: Record<(typeof ManifestKeys)[number]["key"], unknown> = {
    runId: m.runId, format: m.format, layoutVersion: LAYOUT_VERSION, dictionaryVersion: DICTIONARY_VERSION, snapshotId, runs: m.runs, startedAt, finishedAt, walked, files,
  };
  return `${JSON.stringify(Object.fromEntries(ManifestKeys.map(({ key }) => [key, values[key]])), null, 2)}\n`;
}

/**
 * The manifest of a complete deltas folder: present, well formed, and every file it lists there
 * with the hash it records. Anything else (no folder, a stranger's folder, a file whose data a
 * power loss did not keep) is `undefined`.
 */
export function readCompleteFolder(dir: string): Manifest | undefined {
  const m = readManifest(dir);
  if (!m) return undefined;
  for (const f of m.files) {
    if (typeof f?.file !== "string" || f.file.includes("/") || f.file.includes("\\")) return undefined;
    try {
      if (createHash("sha256").update(readFileSync(join(dir, f.file))).digest("hex") !== f.sha256) return undefined;
    } catch {
      return undefined;
    }
  }
  return m;
}

export const sameRuns = (a: readonly number[], b: readonly number[]): boolean => a.length === b.length && a.every((r, i) => r === b[i]);

/**
 * A folder's manifest as written, its files not checked: enough to tell our own folder of a run
 * (one a power loss left with a file that does not match) from a stranger's. `name`: the table
 * layout's `_manifests/00000010.json` (table-layout.ts).
 */
export function readManifest(dir: string, name: string = MANIFEST): Manifest | undefined {
  let text: string;
  try {
    text = readFileSync(join(dir, name), "utf8");
  } catch {
    return undefined;
  }
  return parseManifest(text);
}

/** A manifest's text as a Manifest, when it is one (an S3 folder's manifest is read the same way). */
export function parseManifest(text: string): Manifest | undefined {
  let m: Manifest;
  try {
    m = JSON.parse(text) as Manifest;
  } catch {
    return undefined;
  }
  if (!m || typeof m.runId !== "number" || !Array.isArray(m.runs) || !Array.isArray(m.files)) return undefined;
  return m.format === undefined ? { ...m, format: "csv" } : m;
}

/**
 * What a folder's `manifest.json` holds, key by key, in the order it is written: one list for the
 * writer's key order (manifest.ts) and for the data dictionary's table (docs/outputs.md).
 */

/**
 * The layout of a run folder's files (their names, columns and encodings). A loader refuses a
 * layout it does not know. 1: before it was written (no `layoutVersion`); 2 (the downstream
 * contract, issue 24): zero-padded folder names, `changed_fields` in every format, claim lines
 * numbered `line_no` from 1, Parquet typed as the warehouse (`createdAt` a TIMESTAMP in UTC).
 */
export const LAYOUT_VERSION = 2;

export const ManifestKeys = [
  { key: "runId", meaning: "the folder's run (an integer)" },
  { key: "format", meaning: "`csv`, `jsonl` or `parquet`" },
  { key: "layoutVersion", meaning: `the files' layout (${LAYOUT_VERSION}; a folder without it is layout 1): refuse one you do not know` },
  { key: "dictionaryVersion", meaning: "the version of this dictionary the files follow" },
  { key: "snapshotId", meaning: "the snapshot the run belongs to (run ids start at 1 in every snapshot); null only from an old snapshot exported read-only" },
  { key: "runs", meaning: "the runs whose changes the folder carries: `[runId]`" },
  { key: "startedAt", meaning: "when the run started, UTC, ISO 8601" },
  { key: "finishedAt", meaning: "when the run finished, UTC, ISO 8601" },
  { key: "walked", meaning: "what the run walked: `resources` (a list) and `claimsWindow` (`{from, to}` dates, or null without claims)" },
  { key: "files", meaning: "each file: `file`, `rows`, `sha256` (check it before loading)" },
] as const;

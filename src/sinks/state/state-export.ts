/**
 * `export --state` / `export --history`: every view of the snapshot as of run N (its current rows
 * then) or every version up to run N, one file per view, and a manifest (each file's rows and
 * SHA-256), as `DIR/state-<N, 8 digits>/` or `DIR/history-<N, 8 digits>/`. Read inside one read
 * transaction (every file sees the same snapshot), streamed row by row, written into a hidden
 * folder and made visible by one rename (state-folder.ts). Only what the snapshot recorded goes in
 * (no clock, no path): the same run exported twice gives the same bytes.
 */
import type { Database } from "better-sqlite3";
import { UsageError } from "../../input-errors.js";
import { checkExportable } from "../sink.js";
import { runFacts } from "../run-facts.js";
import { explainFsError } from "../output-error.js";
import type { FileFormatName } from "../files/folder-sink.js";
import type { ManifestFile } from "../files/manifest.js";
import { discardStaged, publishStaged, stageFolder, writeStagedManifest } from "./state-folder.js";
import { stateViews, type StateKind, type StateRow, type StateView } from "./state-views.js";
import { writeStateFile } from "./state-writers.js";

/** What an export wrote. */
export interface StateFolder {
  readonly kind: StateKind;
  readonly runId: number;
  readonly format: FileFormatName;
  readonly dir: string;
  readonly files: readonly ManifestFile[];
}

/** The latest run that succeeded: what `export --state` exports without `--run`. */
export function latestSucceededRun(db: Database): number {
  const run = db.prepare("SELECT MAX(run_id) FROM _runs WHERE status = 'succeeded'").pluck().get() as number | null;
  if (run === null) throw new UsageError(["--run: no run has succeeded in this snapshot yet; run `benefits-sync sync` first, or give --run N (`benefits-sync runs` lists them)"]);
  return run;
}

function* rowsOf(db: Database, view: StateView, runId: number): Generator<StateRow> {
  for (const raw of db.prepare(view.sql).raw().iterate({ n: runId }) as IterableIterator<unknown[]>) yield view.prepare(raw);
}

/**
 * Write `kind` of run `runId` under `outDir`. A UsageError for an unknown run or one still
 * running; an OutputError when the folder cannot be written (nothing visible changed).
 *
 * @example await exportState(db, "state", 10, "exports", "parquet") // exports/state-00000010/{designs,...,claim_lines}.parquet + manifest.json
 */
export async function exportState(db: Database, kind: StateKind, runId: number, outDir: string, format: FileFormatName): Promise<StateFolder> {
  checkExportable(db, runId);
  const facts = runFacts(db, runId);
  const staged = stageFolder(outDir, kind, runId, format, facts.snapshotId);
  try {
    // deferred: a read-only connection's one consistent view across every file (nothing is written).
    db.exec("BEGIN");
    const files: ManifestFile[] = [];
    try {
      const runStart = new Map((db.prepare("SELECT run_id, started_at FROM _runs UNION ALL SELECT run_id, started_at FROM _pruned_runs").raw().all() as [number, string][]).map(([r, t]) => [r, t]));
      for (const view of stateViews(kind, runStart)) {
        try {
          files.push(await writeStateFile(staged.tmp, view.name, format, view.columns, rowsOf(db, view, runId)));
        } catch (e) {
          // A file-system failure (a full disk, a folder made read-only) says where and what to do.
          throw explainFsError(staged.parent, (e as NodeJS.ErrnoException).path ?? staged.tmp, e);
        }
      }
    } finally {
      db.exec("COMMIT");
    }
    const manifest = {
      kind, runId, format, snapshotId: facts.snapshotId, startedAt: facts.startedAt, finishedAt: facts.finishedAt,
      files: files.map((f) => ({ file: f.file, rows: f.rows, sha256: f.sha256 })),
    };
    writeStagedManifest(staged, `${JSON.stringify(manifest, null, 2)}\n`);
    return { kind, runId, format, dir: publishStaged(staged), files };
  } finally {
    discardStaged(staged);
  }
}

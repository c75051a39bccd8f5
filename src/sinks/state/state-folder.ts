/**
 * Where a state or history export goes, and how it becomes visible: `DIR/state-00000010/` (or
 * `history-00000010/`) for run 10, written in a hidden sibling (`DIR/.state-00000010.tmp-<host>-<pid>-XXXXXX`,
 * removed by the next writer once its own writer is gone: files/leftovers.ts)
 * and made visible whole by ONE step, {@link publishStaged} (a rename for a local folder; an object
 * store's publish uploads the files, the manifest last, in its place). A folder already there is
 * replaced only when it is a state export of the same kind, run and format from the same snapshot
 * (the same bytes); anything else there is refused, never lost.
 */
import { existsSync, mkdtempSync, readFileSync, renameSync, rmSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { OutputError } from "../output-error.js";
import { fsStep, fsyncDir } from "../files/fs-step.js";
import { ensureOutputDir } from "../output-dir.js";
import { checkFolderSnapshot } from "../files/folder-owner.js";
import { clearLeftovers, markWriting, stateTempPrefix } from "../files/leftovers.js";
import { MANIFEST } from "../files/manifest.js";
import { runFolderName } from "../files/run-folder-name.js";
import type { StateKind } from "./state-views.js";

/** `state-00000010` / `history-00000010`. */
export const stateFolderName = (kind: StateKind, runId: number): string => `${kind}-${runFolderName(runId)}`;

/** A staged export: the hidden folder the files are written in, and where it goes. */
export interface Staged {
  readonly parent: string;
  readonly tmp: string;
  readonly finalDir: string;
}

/** What a state folder's manifest says of itself (enough to tell one of ours from a stranger's). */
interface StateManifestHead {
  readonly kind?: unknown;
  readonly runId?: unknown;
  readonly format?: unknown;
}

function readStateManifest(dir: string): StateManifestHead | undefined {
  try {
    const m = JSON.parse(readFileSync(join(dir, MANIFEST), "utf8")) as unknown;
    return m !== null && typeof m === "object" ? (m as StateManifestHead) : undefined;
  } catch {
    return undefined;
  }
}

/**
 * Make the hidden folder for `kind` of run `runId` of snapshot `snapshotId` in `outDir` (created if
 * missing; its parent must exist). Refuses a folder that belongs to another snapshot (an
 * OutputSnapshotError, exit 2: one output, one snapshot, as for run folders: folder-owner.ts), and
 * (OutputError) a folder already there that is not the same export.
 */
export function stageFolder(outDir: string, kind: StateKind, runId: number, format: string, snapshotId: string | null): Staged {
  const parent = ensureOutputDir(outDir).path;
  checkFolderSnapshot(parent, snapshotId);
  const name = stateFolderName(kind, runId);
  const finalDir = join(parent, name);
  if (existsSync(finalDir)) {
    const m = readStateManifest(finalDir);
    if (!m || m.kind !== kind || m.runId !== runId || m.format !== format) {
      throw new OutputError(
        parent,
        `${finalDir} exists and is not a ${kind} export of run ${runId} in ${format} written by benefits-sync`,
        `move ${finalDir} away (or delete it if nothing in it is needed), or choose another output directory (--out)`,
      );
    }
  }
  clearLeftovers(parent);
  const tmp = fsStep(parent, () => mkdtempSync(stateTempPrefix(parent, name)));
  markWriting(tmp, true);
  return { parent, tmp, finalDir };
}

/** Write the manifest into the staged folder (fsynced), last of its files. */
export function writeStagedManifest(s: Staged, text: string): void {
  fsStep(s.parent, () => writeFileSync(join(s.tmp, MANIFEST), text, { mode: 0o600, flush: true }));
}

/**
 * The one step that makes a staged export visible: the complete hidden folder renamed into place
 * (a folder of the same export there is set aside first, removed after). Returns the final path.
 */
export function publishStaged(s: Staged): string {
  fsStep(s.parent, () => {
    fsyncDir(s.tmp);
    if (existsSync(s.finalDir)) {
      const old = `${s.tmp}.old`;
      renameSync(s.finalDir, old);
      renameSync(s.tmp, s.finalDir);
      rmSync(old, { recursive: true, force: true });
    } else {
      renameSync(s.tmp, s.finalDir);
    }
  });
  markWriting(s.tmp, false);
  try {
    fsyncDir(s.parent);
  } catch {
    /* best effort: the rename is done */
  }
  return s.finalDir;
}

/** Remove what is left of a staged export that was not published. */
export function discardStaged(s: Staged): void {
  rmSync(s.tmp, { recursive: true, force: true });
  markWriting(s.tmp, false);
}

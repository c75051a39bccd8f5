import { OutputError, OutputNames, type OutputKind } from "../errors.js";

export { OutputError };

const errnoCode = (e: unknown): string | undefined =>
  e && typeof e === "object" && typeof (e as { code?: unknown }).code === "string" ? (e as { code: string }).code : undefined;

/**
 * Explain a file-system error met while writing under `dir`: what went wrong at `where` (the path
 * the failing call named) and what to do; `kind` names the output (deltas, a report). An error
 * that is not a file-system one is returned as is.
 */
export function explainFsError(dir: string, where: string, e: unknown, kind: OutputKind = "deltas"): unknown {
  const code = errnoCode(e);
  // Only the file system's errors (errno codes: ENOENT, EACCES, ...); an SQLite error is not a path problem.
  if (code === undefined || !/^E[A-Z]+$/.test(code)) return e;
  const at = where === dir ? "it" : where;
  switch (code) {
    case "EACCES":
    case "EPERM":
      return new OutputError(dir, `permission denied on ${where}`, `make ${at} writable by this user, or choose another output directory (--out)`, e, kind);
    case "EROFS":
      return new OutputError(dir, `${where} is on a read-only file system`, "choose an output directory (--out) on a writable file system", e, kind);
    case "ENOSPC":
    case "EDQUOT":
      return new OutputError(dir, `no space left on the device (or quota) holding ${where}`, "free some space, or choose an output directory (--out) on another device", e, kind);
    case "ENOTDIR":
    case "EEXIST":
      return new OutputError(dir, `${where} is a file, not a directory`, `choose a directory for the output (--out), or move ${where} away`, e, kind);
    case "ENOENT":
      return new OutputError(dir, `${where} disappeared ${OutputNames[kind].during}`, "make sure nothing else removes or moves the output directory, then run again", e, kind);
    case "ENAMETOOLONG":
      return new OutputError(dir, "the path is too long", "choose a shorter output directory (--out)", e, kind);
    case "ENOTEMPTY":
      return new OutputError(dir, `${where} appeared ${OutputNames[kind].during} (another process writing the same folder?)`, "run again once the other writer has finished", e, kind);
    default:
      return new OutputError(dir, `${where}: ${e instanceof Error ? e.message : String(e)}`, "check the output directory (--out), then run again", e, kind);
  }
}

/**
 * A delivery refused because the output belongs to another snapshot (a folder's run folders, a
 * warehouse's `_meta`): a usage error (exit 2), fixed by choosing another output, not by retrying.
 */
export const isSnapshotRefusal = (code: string | undefined): boolean => code === "OUTPUT_SNAPSHOT" || code === "WAREHOUSE_SNAPSHOT";

/**
 * A delivery refused for good until the output changes (exit 2): another snapshot's output, one
 * that holds the other layout, a bucket that does not exist, a bucket without the encryption the
 * sink requires.
 */
export const isOutputRefusal = (code: string | undefined): boolean => isSnapshotRefusal(code) || code === "OUTPUT_LAYOUT" || code === "S3_NO_BUCKET" || code === "S3_UNENCRYPTED";

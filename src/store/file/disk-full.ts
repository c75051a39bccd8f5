/**
 * A full disk under the snapshot. SQLite only says "database or disk is full", which names neither
 * the file nor the space left, so every place that writes the snapshot (or a file beside it) turns
 * that failure into a {@link DiskFullError} here, with the file system's free space (statfs).
 */
import { statfsSync } from "node:fs";
import { dirname, resolve } from "node:path";
import { DiskFullError } from "../../errors.js";

// SQLITE_IOERR_SHMSIZE: the -shm file could not grow (its file system full), which SQLite calls "disk I/O error".
const FULL_CODES = new Set(["SQLITE_FULL", "ENOSPC", "DISK_FULL", "SQLITE_IOERR_SHMSIZE"]);
/** Below this free, any other write error of SQLite's ("disk I/O error") is the disk being full. */
const NEARLY_FULL = 1 << 20;

/** Whether an error is the disk (or its quota) being full. */
export function isDiskFull(e: unknown): boolean {
  const code = (e as { code?: unknown } | null)?.code;
  return typeof code === "string" && FULL_CODES.has(code);
}

/**
 * `e` as a {@link DiskFullError} about the snapshot at `path` when the disk is full; otherwise `e`.
 *
 * @example
 * catch (e) { throw asDiskFull(e, "/data/snap.db"); }
 */
export function asDiskFull(e: unknown, path: string, then?: string): unknown {
  if (e instanceof DiskFullError) return then === undefined ? e : new DiskFullError(e.path, e.freeBytes, freeText(e.freeBytes), dirname(resolve(e.path)), e.cause ?? e, then);
  const dir = dirname(resolve(path));
  const freeBytes = freeAt(dir);
  const code = (e as { code?: unknown } | null)?.code;
  const ioerr = typeof code === "string" && code.startsWith("SQLITE_IOERR") && freeBytes !== undefined && freeBytes < NEARLY_FULL;
  if (!isDiskFull(e) && !ioerr) return e;
  return new DiskFullError(path, freeBytes, freeText(freeBytes), dir, e, then);
}

const freeText = (freeBytes: number | undefined) => (freeBytes === undefined ? "an unknown amount" : formatBytes(freeBytes));

function freeAt(dir: string): number | undefined {
  try {
    const fs = statfsSync(dir);
    return fs.bavail * fs.bsize;
  } catch {
    return undefined;
  }
}

/** `0 bytes`, `512 bytes`, `16.0 KB`, `1.5 MB`, `2.3 GB` (1 KB = 1024 bytes). */
export function formatBytes(n: number): string {
  if (n < 1024) return `${n} bytes`;
  const units = ["KB", "MB", "GB", "TB"];
  let v = n / 1024;
  let i = 0;
  while (v >= 1024 && i < units.length - 1) [v, i] = [v / 1024, i + 1];
  return `${v.toFixed(1)} ${units[i]}`;
}

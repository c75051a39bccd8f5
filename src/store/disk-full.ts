/**
 * A full disk under the snapshot. SQLite only says "database or disk is full", which names neither
 * the file nor the space left, so every place that writes the snapshot (or a file beside it) turns
 * that failure into a {@link DiskFullError} here, with the file system's free space (statfs).
 */
import { statfsSync } from "node:fs";
import { dirname, resolve } from "node:path";
import { DiskFullError } from "../errors.js";

const FULL_CODES = new Set(["SQLITE_FULL", "ENOSPC", "DISK_FULL"]);

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
export function asDiskFull(e: unknown, path: string): unknown {
  if (!isDiskFull(e) || e instanceof DiskFullError) return e;
  const dir = dirname(resolve(path));
  let freeBytes: number | undefined;
  try {
    const fs = statfsSync(dir);
    freeBytes = fs.bavail * fs.bsize;
  } catch {
    freeBytes = undefined;
  }
  return new DiskFullError(path, freeBytes, freeBytes === undefined ? "an unknown amount" : formatBytes(freeBytes), dir, e);
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

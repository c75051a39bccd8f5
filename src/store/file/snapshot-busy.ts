/**
 * What a second process learns of a snapshot that is taken, before it writes anything: cron
 * starting a sync on top of a slow one must exit 75 at once naming the run that holds the file
 * (run-lease.ts), not wait for the write lock and end with a bare SQLITE_BUSY. Every early step
 * that may write (creating or migrating the file, recording its service) turns a lock that stayed
 * taken into the same refusal.
 */
import BetterSqlite3 from "better-sqlite3";
import type { Database } from "better-sqlite3";
import { randomBytes } from "node:crypto";
import { existsSync } from "node:fs";
import { SnapshotBusyError } from "../../errors.js";
import { recogniseSnapshotFile } from "./snapshot-file.js";
import { DEFAULT_LEASE_MS, isBusy, lockedByOther, lockedError, refuseIfHeld, type LeaseHolder } from "../runs/run-lease.js";

/** A process that holds no run: every live run it finds is another's. */
const outsider = (): LeaseHolder => ({ owner: randomBytes(8).toString("hex"), leaseMs: DEFAULT_LEASE_MS, now: () => new Date() });

/** `fn` on a read-only connection to the snapshot at `path`; undefined when there is none to read (no file yet, not migrated). */
function reading<T>(path: string, fn: (db: Database) => T): T | undefined {
  if (path === ":memory:" || !existsSync(path)) return undefined;
  let db: Database | undefined;
  try {
    // Only a file marked as ours is opened here: another application's is left exactly as it was.
    if (recogniseSnapshotFile(path) !== "ours") return undefined;
    db = new BetterSqlite3(path, { readonly: true, fileMustExist: true });
    if (db.prepare("SELECT 1 FROM sqlite_master WHERE type = 'table' AND name = '_runs'").get() === undefined) throw new Error("no run log");
  } catch {
    db?.close();
    return undefined; // not a snapshot (yet): the steps that follow say what is wrong with the file
  }
  try {
    return fn(db);
  } finally {
    db.close();
  }
}

/**
 * Throw SnapshotBusyError when a live run holds the snapshot at `path`, by reading only.
 *
 * @example refuseIfTaken(config.db) // throws "run 7 (pid 4242 on etl-1, started ...) holds this snapshot ..."
 */
export function refuseIfTaken(path: string): void {
  try {
    reading(path, (db) => refuseIfHeld(db, outsider()));
  } catch (e) {
    // Only a live run refuses here; a file that is not a snapshot is told by the steps that follow.
    if (e instanceof SnapshotBusyError) throw e;
  }
}

/**
 * An error of an early step, with SQLite's SQLITE_BUSY (a write lock still taken after the busy
 * timeout) turned into the SnapshotBusyError that names who holds it; any other error as it was.
 */
export function asSnapshotBusy(path: string, e: unknown): unknown {
  if (!isBusy(e)) return e;
  return reading(path, (db) => lockedError(db, outsider())) ?? lockedByOther(path);
}

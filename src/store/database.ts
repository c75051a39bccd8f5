import BetterSqlite3 from "better-sqlite3";
import type { Database } from "better-sqlite3";
import { chmodSync, closeSync, openSync } from "node:fs";
import { migrate } from "./migrations.js";

/**
 * Open (or create) the snapshot file: mode 0600 before SQLite writes a byte (SQLite gives the
 * -wal and -shm files the database's mode), WAL, a busy timeout, and the latest schema.
 *
 * Commits during a walk use `synchronous=NORMAL`: in WAL mode a crash of the process loses
 * nothing committed and a power loss may lose the last commits but never consistency. The commit
 * that ends a run switches to FULL (see SnapshotStore.finishRun).
 */
export function openDatabase(path: string, opts: { readonly?: boolean } = {}): Database {
  if (path !== ":memory:" && !opts.readonly) {
    closeSync(openSync(path, "a", 0o600));
    chmodSync(path, 0o600);
  }
  const db = new BetterSqlite3(path, { readonly: opts.readonly ?? false, fileMustExist: opts.readonly ?? false });
  db.pragma("busy_timeout = 10000");
  if (!opts.readonly) {
    // Set before the first table exists (it cannot change afterwards): the pages a run borrows for
    // its seen ids are handed back to the file system when it ends, so an unchanged re-sync does
    // not grow the file.
    if (db.pragma("user_version", { simple: true }) === 0) db.pragma("auto_vacuum = INCREMENTAL");
    db.pragma("journal_mode = WAL");
    db.pragma("synchronous = NORMAL");
    // 32 MB of page cache: the current-version index of a 100k-member snapshot fits. Measured with
    // the benchmark's first sync: 64 MB was 5% faster and cost 35 MB more peak memory, which the
    // 300 MB bar cannot spare.
    db.pragma("cache_size = -32768");
    migrate(db);
  }
  return db;
}

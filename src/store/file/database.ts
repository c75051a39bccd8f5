import BetterSqlite3 from "better-sqlite3";
import type { Database } from "better-sqlite3";
import { chmodSync } from "node:fs";
import { dirname, resolve } from "node:path";
import { SnapshotPathError } from "../../errors.js";
import { asDiskFull } from "./disk-full.js";
import { markWrittenUnderErasureRule, writeUnderErasureRule } from "./erasure.js";
import { terminalProgress, type MigrationProgress } from "../schema/migration-progress.js";
import { migrate } from "../schema/migrations.js";
import { StoreCacheSize } from "../schema/bulk-build.js";
import { checkSnapshotSchema, directoryError, recogniseSnapshotFile, statOrUndefined } from "./snapshot-file.js";
import { checkSchemaHeader } from "../schema/schema-header.js";
import { createSqliteFile } from "./sqlite-file.js";

/**
 * Open (or create) the snapshot file: refused, untouched, when it is not ours (see
 * snapshot-file.ts); mode 0600 before SQLite writes a byte (SQLite gives the
 * -wal and -shm files the database's mode), WAL, a busy timeout, the latest schema, and SQLite's
 * secure_delete (erasure.ts: what a write removes does not stay in the file). No raw
 * descriptor of the file is ever opened (sqlite-file.ts: it would drop the locks of the
 * connections this process, its worker threads included, holds on it).
 *
 * Commits during a walk use `synchronous=NORMAL`: in WAL mode a crash of the process loses
 * nothing committed and a power loss may lose the last commits but never consistency. The commit
 * that ends a run switches to FULL (see SnapshotStore.finishRun).
 *
 * A path that cannot hold the file (a missing or read-only directory, a directory named as the
 * file) is a {@link SnapshotPathError} that says what to do; no directory is created for the user.
 *
 * @example
 * const db = openDatabase("benefits-sync.db");
 */
export function openDatabase(path: string, opts: { readonly?: boolean; progress?: MigrationProgress } = {}): Database {
  let db: Database | undefined;
  try {
    // Before any write, pragma or chmod: a file that is not ours is left exactly as it was.
    const kind = path === ":memory:" ? "absent" : recogniseSnapshotFile(path);
    if (path !== ":memory:" && !opts.readonly && kind === "absent") createSqliteFile(path);
    db = new BetterSqlite3(path, { readonly: opts.readonly ?? false, fileMustExist: opts.readonly ?? false });
    if (kind === "unmarked") checkSnapshotSchema(db, path);
    // A header behind the schema held (a restored file): refused before a pragma or a migration writes.
    if (path !== ":memory:") checkSchemaHeader(db, path);
    if (path !== ":memory:" && !opts.readonly) chmodSync(path, 0o600);
    db.pragma("busy_timeout = 10000");
    if (!opts.readonly) {
      // Set before the first table exists (it cannot change afterwards): the pages a run borrows for
      // its seen ids are handed back to the file system when it ends, so an unchanged re-sync does
      // not grow the file.
      const created = db.pragma("user_version", { simple: true }) === 0;
      if (created) {
        // 16 KB pages (SQLite's default is 4 KB): a version row is about 1 KB, and on the
        // benchmark's 100k-member first load, writing and indexing took 20% less time (measured
        // at 4, 8, 16, 32 and 64 KB). A snapshot created before keeps its page size. Set before
        // auto_vacuum, which would fix the default size.
        db.pragma("page_size = 16384");
        db.pragma("auto_vacuum = INCREMENTAL");
      }
      db.pragma("journal_mode = WAL");
      db.pragma("synchronous = NORMAL");
      db.pragma(`cache_size = ${StoreCacheSize}`);
      // What a write removes or replaces is overwritten (erasure.ts): a migration's rewrite of an
      // existing file's rows included; a new file's schema, which holds no person data yet, is
      // written without (its zeroed pages would triple the WAL of a first start).
      if (!created) writeUnderErasureRule(db);
      // A snapshot made by an older benefits-sync is converted here; a long conversion shows its
      // progress on a terminal (migration-progress.ts).
      migrate(db, opts.progress ?? terminalProgress());
      if (created) {
        writeUnderErasureRule(db);
        markWrittenUnderErasureRule(db);
      }
    }
    return db;
  } catch (err) {
    db?.close();
    if (path === ":memory:") throw err;
    throw pathProblem(path, err, opts.readonly ?? false) ?? asDiskFull(err, path);
  }
}

// Failures that come from where the file is rather than from what it holds. SQLite reports a
// file it cannot open or write (the -wal beside it in a read-only directory) by its own codes.
const PATH_CODES = new Set(["ENOENT", "ENOTDIR", "EISDIR", "EACCES", "EPERM", "EROFS", "EEXIST", "SQLITE_CANTOPEN", "SQLITE_READONLY", "SQLITE_READONLY_DIRECTORY"]);
const WHERE = "--db / BENEFITS_DB";
const REASONS: Record<string, string> = {
  EACCES: "permission denied",
  EPERM: "permission denied",
  EROFS: "the file system is read-only",
  ENOENT: "the directory does not take new files",
  EEXIST: "something else is in the way",
};

/** Say what is wrong with the snapshot's path, by looking at it, or undefined when the failure is not about the path. */
function pathProblem(path: string, err: unknown, readonly: boolean): SnapshotPathError | undefined {
  const code = (err as { code?: unknown } | null)?.code;
  if (typeof code !== "string" || !PATH_CODES.has(code)) return undefined;
  const file = resolve(path);
  const dir = dirname(file);
  const problem = (text: string) => new SnapshotPathError(path, `db: ${text}`);
  if (statOrUndefined(file)?.isDirectory()) return directoryError(path);
  let existing = dir;
  let st = statOrUndefined(existing);
  while (st === undefined && dirname(existing) !== existing) st = statOrUndefined((existing = dirname(existing)));
  if (st && !st.isDirectory()) {
    return problem(`${existing} is a file, not a directory, so the snapshot ${path} cannot be created under it: point ${WHERE} at a path inside a directory`);
  }
  if (existing !== dir) return problem(`the directory ${dir} does not exist (for the snapshot ${path}): create it, or point ${WHERE} elsewhere`);
  if (readonly && statOrUndefined(file) === undefined) {
    return problem(`no snapshot at ${path}: run \`benefits-sync sync\` first, or point ${WHERE} at an existing one`);
  }
  const why = REASONS[code] ?? "SQLite could not open or write it there";
  return problem(`cannot create or write the snapshot ${path} (and its -wal and -shm files) in ${dir}: ${why}; point ${WHERE} at a writable directory, or give this user write access to ${dir}`);
}

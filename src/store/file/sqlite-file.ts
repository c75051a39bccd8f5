/**
 * The one rule for the files SQLite may have open in this process (the snapshot, the webhook
 * inbox, and their -wal, -shm and -journal files): this process never opens a raw descriptor on one.
 *
 * Why: SQLite's locks on Unix are POSIX advisory locks. They belong to the process and the file,
 * not to a descriptor, and closing ANY descriptor of the file drops EVERY lock the process holds
 * on it (SQLite's "How To Corrupt An SQLite Database File", https://www.sqlite.org/howtocorrupt.html,
 * section 2.2). SQLite keeps its own descriptors of a file open until its last connection in the
 * process is done with it, so its connections, of every worker thread (one SQLite library per
 * process), never drop each other's locks; a descriptor of ours, opened and closed, drops them all, and
 * the process keeps believing it holds them. Every other SQLite client (a `sqlite3` shell, a
 * backup, our other processes) then sees no one: the last of them to close checkpoints and DELETES
 * the -wal and -shm under our open connections, whose later commits go to a deleted file. Issue 37:
 * webhook events answered 200 and absent after a kill -9, every delivery answered 503
 * (SQLITE_NOTADB) after an outside `select count(*)`, an inbox left "file is not a database".
 *
 * So, for a SQLite file:
 * - it is created by {@link createSqliteFile}: empty, mode 0600 (SQLite gives -wal and -shm the
 *   mode of the database), made in a directory only that call knows, where no connection can hold
 *   it, and hard-linked into place; there is no moment at which it exists with a wider mode;
 * - its type, size and mode are read and set by path (stat, chmod: no descriptor);
 * - what it holds (its header: is it SQLite, its application_id) is read through SQLite itself,
 *   {@link sqliteApplicationId}, never from its bytes.
 * Every other file opened raw next to these files (the census journal and its lock, beside the
 * snapshot) is opened by {@link openBesideSqlite}, which refuses a path SQLite uses. The unit test
 * test/unit/store/sqlite-file.test.ts holds the list of the other raw opens in src/ and why each is safe.
 */
import BetterSqlite3 from "better-sqlite3";
import { linkSync, mkdtempSync, openSync, rmSync, statSync, writeFileSync } from "node:fs";
import { basename, dirname, join } from "node:path";

/**
 * Create an empty file at `path` with mode 0600 for SQLite to use, when there is none; an
 * existing file (or one another process or thread creates meanwhile) is left as it is. No
 * descriptor of `path` is opened. Errors are the file system's (ENOENT, EACCES, EROFS...).
 *
 * @example createSqliteFile("benefits-sync.db"); const db = new BetterSqlite3("benefits-sync.db");
 */
export function createSqliteFile(path: string): void {
  if (exists(path)) return;
  const dir = mkdtempSync(join(dirname(path), `.${basename(path)}.new-`));
  try {
    const fresh = join(dir, "file");
    writeFileSync(fresh, "", { flag: "wx", mode: 0o600 });
    try {
      linkSync(fresh, path);
    } catch (e) {
      const code = (e as NodeJS.ErrnoException).code;
      if (code === "EEXIST") return;
      // A file system without hard links: created at the path itself, exclusively (a file that did
      // not exist a moment ago, so no connection of ours can hold a lock on it yet).
      if (code === "EPERM" || code === "ENOTSUP" || code === "EOPNOTSUPP" || code === "EMLINK") writeFileSync(path, "", { flag: "wx", mode: 0o600 });
      else throw e;
    }
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
}

/**
 * The application_id of the SQLite database at `path`, read through SQLite on a read-only
 * connection of its own (closing it drops no lock another connection of this process holds), or
 * undefined when SQLite says the file is not a database. It sees what the -wal holds too. Other
 * failures (a lock held past the timeout, a file it cannot open) are thrown as SQLite reports them.
 *
 * @example if (sqliteApplicationId("snap.db") === undefined) throw new Error("not a SQLite database");
 */
export function sqliteApplicationId(path: string): number | undefined {
  let db: BetterSqlite3.Database | undefined;
  try {
    db = new BetterSqlite3(path, { readonly: true, fileMustExist: true });
    return db.pragma("application_id", { simple: true }) as number;
  } catch (e) {
    const code = (e as { code?: unknown }).code;
    if (code === "SQLITE_NOTADB" || code === "SQLITE_CORRUPT") return undefined;
    throw e;
  } finally {
    db?.close();
  }
}

/** A name SQLite gives its files: a database (.db, .sqlite, .sqlite3) or one of its -wal, -shm, -journal. */
const SQLITE_NAME = /(\.(db|sqlite3?)|-(wal|shm|journal))$/i;

/**
 * Open a file that is not SQLite's, next to files that are (the census journal and its lock,
 * beside the snapshot): `openSync(path, flags, mode)`, refused for a path named as SQLite names
 * its files, where closing the descriptor could drop the locks of a connection.
 *
 * @example const fd = openBesideSqlite("snap.db.census/gp1.journal.jsonl", "a", 0o600);
 */
export function openBesideSqlite(path: string, flags: string, mode: number): number {
  if (SQLITE_NAME.test(path)) throw new Error(`${path} is named as a SQLite file: it is never opened outside SQLite (see src/store/file/sqlite-file.ts)`);
  return openSync(path, flags, mode);
}

function exists(path: string): boolean {
  try {
    statSync(path);
    return true;
  } catch (e) {
    if ((e as NodeJS.ErrnoException).code === "ENOENT") return false;
    throw e;
  }
}

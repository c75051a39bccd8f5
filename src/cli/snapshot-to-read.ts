/**
 * The snapshot as a command that only reads it opens it (`runs`, `jobs`, `export`, `reconcile`):
 * never created, chmod-ed or migrated. A missing or empty file is no snapshot yet (exit 2, and
 * it stays missing or empty); a snapshot an older benefits-sync made is left as it is, and the
 * command says which command converts it (any that writes: `sync` first of all).
 */
import type { Database } from "better-sqlite3";
import { statSync } from "node:fs";
import { ConfigError } from "../errors.js";
import { InputFileError } from "../input-errors.js";
import { openDatabase } from "../store/file/database.js";
import { migrations } from "../store/schema/migrations.js";

/** Whether there is a snapshot at `path` to read: a file that is not empty. */
export function hasSnapshot(path: string): boolean {
  return path === ":memory:" || (statSync(path, { throwIfNoEntry: false })?.size ?? 0) > 0;
}

/**
 * Refuse (ConfigError, exit 2) a snapshot path with no snapshot at it: no file, or a file of 0
 * bytes (which opening for writing would turn into a new snapshot).
 */
export function requireSnapshot(path: string): void {
  if (path === ":memory:") return;
  const size = statSync(path, { throwIfNoEntry: false })?.size;
  if (size === undefined || size === 0) {
    throw new InputFileError([`db: no snapshot at ${path} yet${size === 0 ? " (it is an empty file)" : ""}: run \`benefits-sync sync\` first, or point --db at one`]);
  }
}

/**
 * Open the snapshot read only, after {@link requireSnapshot}. A snapshot of an older schema is
 * refused with what converts it (a read-only open cannot, and its tables may lack what is read),
 * unless `readOld` is given: then the command reads it as it is, through {@link readOrExplain}.
 */
export function openSnapshotToRead(path: string, opts: { readOld?: boolean } = {}): Database {
  requireSnapshot(path);
  const db = openDatabase(path, { readonly: true });
  if (!opts.readOld && isOld(db, path)) {
    const refused = oldSchema(db, path);
    db.close();
    throw refused;
  }
  return db;
}

/** `read(db)`, where a snapshot of an older schema that lacks a table or column read is refused as {@link openSnapshotToRead} refuses it. */
export function readOrExplain<T>(db: Database, path: string, read: () => T): T {
  try {
    return read();
  } catch (e) {
    if (isOld(db, path) && /no such (table|column)/.test((e as Error).message)) throw oldSchema(db, path);
    throw e;
  }
}

const isOld = (db: Database, path: string) => path !== ":memory:" && (db.pragma("user_version", { simple: true }) as number) < migrations.length;

function oldSchema(db: Database, path: string): ConfigError {
  const version = db.pragma("user_version", { simple: true }) as number;
  return new InputFileError([
    `db: the snapshot at ${path} was made by an older benefits-sync (schema ${version}; this one reads ${migrations.length}) and a read-only command does not convert it: ` +
      "run `benefits-sync sync` (or any command that writes to it) once, then this again",
  ]);
}

/**
 * Is the file at `--db` our snapshot? Opening a file migrates it, switches it to WAL and makes it
 * mode 0600, so another application's SQLite file (or any file) named by mistake would be changed
 * in place. Everything here only reads, and runs before the first write, pragma or chmod.
 *
 * Ours: a file marked with {@link SNAPSHOT_APPLICATION_ID}; a snapshot made before the mark
 * existed (application_id 0), known by the tables the first migration made, with its
 * user_version; a file or SQLite database that holds nothing yet, or no file at all.
 */
import BetterSqlite3 from "better-sqlite3";
import type { Database } from "better-sqlite3";
import { statSync, type Stats } from "node:fs";
import { join } from "node:path";
import { NotASnapshotError, SnapshotPathError } from "../../errors.js";
import { sqliteApplicationId } from "./sqlite-file.js";

/** `PRAGMA application_id` of every snapshot: "BSYN". */
export const SNAPSHOT_APPLICATION_ID = 0x4253594e;

/** Made by the first migration in one transaction with user_version 1: every snapshot has them. */
const FIRST_TABLES = ["_runs", "_walk", "_seen"] as const;

/**
 * What the bytes say. `absent` and `empty`: ours to create. `ours`: marked. `unmarked`: a SQLite
 * database without an application_id (or an empty file with a write-ahead log beside it), to be
 * told by its schema, {@link checkSnapshotSchema}, on the connection before anything else is done.
 */
export type SnapshotFileKind = "absent" | "empty" | "ours" | "unmarked";

/**
 * Look at the file: its type and size by path, its header through SQLite on a read-only
 * connection (never from its bytes: a descriptor of ours would drop the locks of every connection
 * of this process, see sqlite-file.ts). Throws {@link NotASnapshotError} for a file that is not SQLite or is
 * marked by another application, and {@link SnapshotPathError} for a directory.
 *
 * @example
 * if (recogniseSnapshotFile("snap.db") === "unmarked") checkSnapshotSchema(db, "snap.db");
 */
export function recogniseSnapshotFile(path: string): SnapshotFileKind {
  const st = statOrUndefined(path);
  if (st === undefined) return "absent";
  if (st.isDirectory()) throw directoryError(path);
  if (!st.isFile()) throw new NotASnapshotError(path, "not a regular file (a device, a pipe or a socket)");
  // A database in WAL mode can hold everything in its log until the first checkpoint.
  if (st.size === 0) return (statOrUndefined(`${path}-wal`)?.size ?? 0) > 0 ? "unmarked" : "empty";
  const applicationId = sqliteApplicationId(path);
  if (applicationId === undefined) {
    throw new NotASnapshotError(path, `not a SQLite database (${st.size} bytes that do not begin with SQLite's header)`);
  }
  if (applicationId === SNAPSHOT_APPLICATION_ID) return "ours";
  if (applicationId !== 0) throw foreignApplication(path, applicationId);
  return "unmarked";
}

/**
 * Tell an unmarked SQLite database by what it holds, reading only: our tables (a snapshot from
 * before the application_id), or nothing at all. Anything else is {@link NotASnapshotError}.
 */
export function checkSnapshotSchema(db: Database, path: string): void {
  let read: { applicationId: number; userVersion: number; tables: string[]; objects: number };
  try {
    // In one read transaction: another command creating this new snapshot may commit its first
    // migration between two reads, and a version 0 read before it beside its tables read after it
    // looked like another application's file (issue 51: 1 in 150 pairs of commands started together).
    // deferred: read-only, it takes no write lock
    read = db.transaction(() => ({
      applicationId: db.pragma("application_id", { simple: true }) as number,
      userVersion: db.pragma("user_version", { simple: true }) as number,
      tables: db.prepare("SELECT name FROM sqlite_master WHERE type = 'table' AND name NOT LIKE 'sqlite\\_%' ESCAPE '\\' ORDER BY name").pluck().all() as string[],
      objects: db.prepare("SELECT COUNT(*) FROM sqlite_master").pluck().get() as number,
    }))();
  } catch {
    throw new NotASnapshotError(path, "a file SQLite cannot read (damaged, encrypted, or not a database)");
  }
  const { applicationId, userVersion, tables, objects } = read;
  if (applicationId === SNAPSHOT_APPLICATION_ID) return;
  if (applicationId !== 0) throw foreignApplication(path, applicationId);
  if (objects === 0 && userVersion === 0) return;
  if (userVersion >= 1 && FIRST_TABLES.every((t) => tables.includes(t))) return;
  throw new NotASnapshotError(path, `a SQLite database of another application (${describeTables(tables, userVersion)})`);
}

/**
 * Both checks, in a read-only connection of its own: for code that writes beside the snapshot
 * (its PII key) without opening it first.
 */
export function assertSnapshotFile(path: string): void {
  if (path === ":memory:" || recogniseSnapshotFile(path) !== "unmarked") return;
  const db = new BetterSqlite3(path, { readonly: true, fileMustExist: true });
  try {
    checkSnapshotSchema(db, path);
  } finally {
    db.close();
  }
}

/** The one message for a `--db` that names a directory (see also database.ts). */
export function directoryError(path: string): SnapshotPathError {
  return new SnapshotPathError(path, `db: ${path} is a directory; --db / BENEFITS_DB names the snapshot file, e.g. ${join(path, "benefits-sync.db")}`);
}

function foreignApplication(path: string, applicationId: number): NotASnapshotError {
  return new NotASnapshotError(path, `a SQLite database of another application (application_id 0x${applicationId.toString(16).padStart(8, "0")})`);
}

const NAMES_SHOWN = 6;

function describeTables(tables: readonly string[], userVersion: number): string {
  const version = userVersion !== 0 ? `; user_version ${userVersion}` : "";
  if (tables.length === 0) return `no tables${version}`;
  const shown = tables.slice(0, NAMES_SHOWN).join(", ") + (tables.length > NAMES_SHOWN ? ", ..." : "");
  return `${tables.length} ${tables.length === 1 ? "table" : "tables"}: ${shown}${version}`;
}

/** The file's stat, or undefined when there is none. */
export function statOrUndefined(path: string): Stats | undefined {
  try {
    return statSync(path);
  } catch {
    return undefined;
  }
}

/**
 * The rule of src/store/file/sqlite-file.ts: no raw descriptor of a file SQLite may have open in this
 * process (closing one drops every POSIX lock the process holds on the file, and the next outside
 * SQLite client to close deletes the -wal under our connections).
 */
import BetterSqlite3 from "better-sqlite3";
import { execFileSync } from "node:child_process";
import { existsSync, mkdtempSync, readdirSync, readFileSync, rmSync, statSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join, relative } from "node:path";
import { afterEach, beforeEach, expect, it } from "vitest";
import { openDatabase } from "../../../src/store/file/database.js";
import { recogniseSnapshotFile } from "../../../src/store/file/snapshot-file.js";
import { createSqliteFile, openBesideSqlite } from "../../../src/store/file/sqlite-file.js";
import { Inbox } from "../../../src/webhooks/inbox.js";

let dir: string;
beforeEach(() => (dir = mkdtempSync(join(tmpdir(), "bs-sqlite-file-"))));
afterEach(() => rmSync(dir, { recursive: true, force: true }));

/** A second connection of this process holding `path` with a commit still in the -wal, as a receiver's is. */
function holder(path: string): BetterSqlite3.Database {
  const db = new BetterSqlite3(path);
  db.pragma("wal_autocheckpoint = 0");
  db.exec("CREATE TABLE IF NOT EXISTS t (x); INSERT INTO t VALUES (1)");
  return db;
}

/** An outside sqlite3 shell reads the file and closes: it deletes the -wal only if it believes it was the last client. */
function outsideReader(path: string): void {
  execFileSync("/usr/bin/sqlite3", ["-cmd", ".timeout 20000", path, "SELECT count(*) FROM sqlite_schema"]);
}

const snapshot = (p: string) => openDatabase(p).close();
const inbox = (p: string) => Inbox.open(p).close();

it.each([
  ["the snapshot's checks (recogniseSnapshotFile)", snapshot, (p: string) => void recogniseSnapshotFile(p)],
  ["opening the snapshot again (openDatabase)", snapshot, (p: string) => openDatabase(p, { readonly: true }).close()],
  ["opening the inbox again (Inbox.open)", inbox, inbox],
  ["createSqliteFile on an existing file", inbox, createSqliteFile],
])("%s keeps the locks of the process's other connection: an outside reader leaves the -wal", (_what, create, again) => {
  const path = join(dir, "file.db");
  create(path);
  const held = holder(path);
  try {
    again(path);
    outsideReader(path);
    expect(existsSync(`${path}-wal`), "the -wal after an outside reader closed").toBe(true);
    expect(held.prepare("SELECT count(*) FROM t").pluck().get()).toBe(1);
  } finally {
    held.close();
  }
});

it("createSqliteFile makes an empty file of mode 0600, and leaves an existing one as it is", () => {
  const path = join(dir, "new.db");
  createSqliteFile(path);
  expect(statSync(path).size).toBe(0);
  expect(statSync(path).mode & 0o777).toBe(0o600);
  writeFileSync(path, "kept");
  createSqliteFile(path);
  expect(readFileSync(path, "utf8")).toBe("kept");
  // No leftover of the private directory it was made in.
  expect(readdirSync(dir)).toEqual(["new.db"]);
  expect(() => createSqliteFile(join(dir, "missing", "x.db"))).toThrow(/ENOENT/);
});

it("openBesideSqlite refuses a path named as SQLite names its files", () => {
  for (const p of ["a.db", "a.sqlite", "a.sqlite3", "a.db-wal", "a.db-shm", "a.db-journal"]) expect(() => openBesideSqlite(join(dir, p), "a", 0o600), p).toThrow(/never opened outside SQLite/);
  expect(existsSync(join(dir, "a.db"))).toBe(false);
});

/**
 * Every raw open left in src/, and why its file is never SQLite's. A new one must say why here, or
 * go through src/store/file/sqlite-file.ts.
 */
const RAW_OPENS: Record<string, string> = {
  "src/store/file/sqlite-file.ts": "the rule itself: openBesideSqlite refuses SQLite's names",
  "src/sinks/files/hashed-file.ts": "a delivered output file (csv, jsonl), created new in a staging folder",
  "src/sinks/parquet/parquet-format.ts": "a delivered parquet file, created new in a staging folder",
  "src/sinks/files/fs-step.ts": "a directory, opened to fsync its entries",
};

/** The files that read a descriptor (readSync, fstatSync), and why it is never a SQLite file's. */
const DESCRIPTOR_READS: Record<string, string> = {
  "src/eligibility/census-input.ts": "the user's census CSV, opened by openBesideSqlite and read in chunks before the command opens any SQLite file",
};

function sources(d: string): string[] {
  return readdirSync(d, { withFileTypes: true }).flatMap((e) => (e.isDirectory() ? sources(join(d, e.name)) : e.name.endsWith(".ts") ? [join(d, e.name)] : []));
}

it("src/ opens no raw descriptor of a SQLite file: no closeSync(openSync(, and every openSync is on the list with its reason", () => {
  const root = join(import.meta.dirname, "..", "..", "..");
  const files = sources(join(root, "src")).map((f) => ({ name: relative(root, f), text: readFileSync(f, "utf8") }));
  expect(files.filter((f) => f.text.includes("closeSync(openSync(")).map((f) => f.name)).toEqual([]);
  expect(files.filter((f) => /\bopenSync\(/.test(f.text)).map((f) => f.name).sort()).toEqual(Object.keys(RAW_OPENS).sort());
  // Reading a descriptor: only of the files on the list.
  expect(files.filter((f) => /\b(readSync|fstatSync)\(/.test(f.text)).map((f) => f.name)).toEqual(Object.keys(DESCRIPTOR_READS));
});

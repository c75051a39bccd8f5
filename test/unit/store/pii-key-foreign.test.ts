/** The PII key file is a write beside the snapshot: never beside a file that is not one. */
import BetterSqlite3 from "better-sqlite3";
import { existsSync, mkdtempSync, readdirSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { loadOrCreatePiiKey } from "../../../src/store/pii/pii.js";

let dir: string;
beforeEach(() => {
  dir = mkdtempSync(join(tmpdir(), "pii-foreign-"));
});
afterEach(() => rmSync(dir, { recursive: true, force: true }));

describe("loadOrCreatePiiKey beside a file that is not a snapshot", () => {
  it("refuses another application's SQLite file and writes no key", () => {
    const path = join(dir, "crm.sqlite");
    const other = new BetterSqlite3(path);
    other.exec("CREATE TABLE runs (id INTEGER PRIMARY KEY)");
    other.close();
    expect(() => loadOrCreatePiiKey(path, undefined)).toThrow(/is not a benefits-sync snapshot: it is a SQLite database of another application \(1 table: runs\)/);
    expect(readdirSync(dir)).toEqual(["crm.sqlite"]);
  });

  it("refuses a file that is not SQLite and writes no key", () => {
    const path = join(dir, "notes.txt");
    writeFileSync(path, "x".repeat(200));
    expect(() => loadOrCreatePiiKey(path, undefined)).toThrow(/not a SQLite database \(200 bytes/);
    expect(existsSync(`${path}.pii-key`)).toBe(false);
  });

  it("creates the key beside a new snapshot path", () => {
    const path = join(dir, "snap.db");
    expect(loadOrCreatePiiKey(path, undefined).created).toBe(true);
    expect(existsSync(`${path}.pii-key`)).toBe(true);
  });
});

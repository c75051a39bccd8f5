/**
 * Migration 13 (`new_fields.masked`: what the SSN rule made of each new field path) on a snapshot
 * made before it: the first twelve migrations, as benefits-sync wrote them, with paths recorded.
 * Read only before the upgrade (doctor, the metrics), the paths are there with no marker; the
 * upgrade keeps every row, and a later run that sees a path again gives it its marker, never
 * another first run, and never takes a marker away.
 */
import BetterSqlite3 from "better-sqlite3";
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, describe, expect, it } from "vitest";
import { openDatabase } from "../../../src/store/file/database.js";
import { migrations } from "../../../src/store/schema/migrations.js";
import { newFields, newFieldsInFile, recordNewFields } from "../../../src/store/walk/new-fields.js";

const dir = mkdtempSync(join(tmpdir(), "bsync-mig13-"));
afterAll(() => rmSync(dir, { recursive: true, force: true }));

/** A snapshot at schema 12 with two paths recorded by run 2. */
function schema12(name: string): string {
  const path = join(dir, name);
  const old = new BetterSqlite3(path);
  old.pragma("journal_mode = WAL");
  for (let v = 0; v < 12; v++) {
    old.transaction(() => {
      migrations[v]!(old);
      old.pragma(`user_version = ${v + 1}`);
    })();
  }
  const seen = old.prepare("INSERT INTO new_fields (resource, path, first_run_id, first_seen_at) VALUES (?, ?, 2, '2026-11-24T02:00:00.000Z')");
  seen.run("members", "taxpayerId");
  seen.run("members", "preferredLanguage");
  old.close();
  return path;
}

describe("migration 13 on a snapshot made before it (schema 12)", () => {
  it("is read before the upgrade with no marker, upgrades in place, and a later sighting gives a path its marker", () => {
    const path = schema12("old.db");
    const unmarked = [
      { resource: "members", path: "preferredLanguage", first_run_id: 2, first_seen_at: "2026-11-24T02:00:00.000Z", masked: null },
      { resource: "members", path: "taxpayerId", first_run_id: 2, first_seen_at: "2026-11-24T02:00:00.000Z", masked: null },
    ];
    // doctor and the metrics read a snapshot without converting it.
    expect(newFieldsInFile(path)).toEqual(unmarked);

    const db = openDatabase(path);
    try {
      // Upgraded to the latest schema (13 and every one after it).
      expect(migrations.length).toBeGreaterThanOrEqual(13);
      expect(db.pragma("user_version", { simple: true })).toBe(migrations.length);
      expect(newFields(db)).toEqual(unmarked);
      // Run 5 sees both again (one masked by its name) and a new one: first runs stay, the marker comes.
      recordNewFields(db, 5, "2026-11-25T02:00:00.000Z", [
        { resource: "members", path: "taxpayerId", masked: "name" },
        { resource: "members", path: "preferredLanguage" },
        { resource: "members", path: "spouseSsn", masked: "name" },
      ]);
      // Run 6 sees it without a marker (a run in --pii keep): the marker stays.
      recordNewFields(db, 6, "2026-11-26T02:00:00.000Z", [{ resource: "members", path: "taxpayerId" }]);
      expect(newFields(db).map((r) => [r.path, r.first_run_id, r.masked])).toEqual([
        ["preferredLanguage", 2, null],
        ["spouseSsn", 5, "name"],
        ["taxpayerId", 2, "name"],
      ]);
      expect(newFields(db, 5).map((r) => r.path)).toEqual(["spouseSsn"]);
      // The column takes only the rule's markers.
      expect(() => db.prepare("UPDATE new_fields SET masked = 'ssn' WHERE path = 'taxpayerId'").run()).toThrow(/CHECK/);
      // Run again (as a restored copy at schema 12 with the column would be), it changes nothing.
      db.transaction(() => migrations[12]!(db))();
      expect(newFields(db).map((r) => r.masked)).toEqual([null, "name", "name"]);
    } finally {
      db.close();
    }
  });
});

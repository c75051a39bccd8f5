/**
 * Migration 11 (the analyst's snapshot at a million members) on a snapshot made by the code
 * before it: test/fixtures/snapshot-schema10.db.gz was made by benefits-sync at commit ab3fa89
 * (schema 10) with test/fixtures/make-old-snapshot.mjs, three runs of a 100-member sandbox
 * with a simulated day between them. Converted in place, every view keeps its columns and every
 * row, as of every run, and the conversion tells its progress on a terminal only.
 */
import BetterSqlite3 from "better-sqlite3";
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, describe, expect, it } from "vitest";
import { openDatabase } from "../../../src/store/file/database.js";
import { migrations } from "../../../src/store/schema/migrations.js";
import { terminalProgress } from "../../../src/store/schema/migration-progress.js";
import { guideQuestions, guideQuestionsGrouped } from "../../helpers/guide-questions.js";
import { answers, unpackSnapshot, views } from "../../helpers/old-snapshot.js";

const FIXTURE = new URL("../../fixtures/snapshot-schema10.db.gz", import.meta.url);
const dir = mkdtempSync(join(tmpdir(), "bsync-mig11-"));
afterAll(() => rmSync(dir, { recursive: true, force: true }));

const oldSnapshot = (name: string) => unpackSnapshot(FIXTURE, dir, name);

describe("migration 11 on a snapshot made before it (schema 10)", () => {
  it("keeps every view's columns and rows and every guide answer, run by run; claim lines come from every claim version", () => {
    const path = oldSnapshot("old.db");
    const before = new BetterSqlite3(path, { readonly: true });
    expect(before.pragma("user_version", { simple: true })).toBe(10);
    expect(before.prepare("SELECT 1 FROM sqlite_schema WHERE name = '_claim_lines'").get()).toBeUndefined();
    const viewsBefore = views(before);
    // Asked as the snapshot of the time could answer them (without the counts of migration 12).
    const answersBefore = answers(before, guideQuestionsGrouped());
    before.close();
    // The fixture has something to lose: changed, deleted and inserted records, lines, memberships.
    expect(viewsBefore.get("changes")!.rows.map((r) => r.op)).toEqual(expect.arrayContaining(["insert", "update", "delete"]));
    expect(viewsBefore.get("claim_lines")!.rows.length).toBeGreaterThan(300);

    const db = openDatabase(path);
    try {
      // Migrated through 11 and on to the latest (12: the counts).
      expect(db.pragma("user_version", { simple: true })).toBe(migrations.length);
      expect(db.prepare("SELECT COUNT(*) FROM _claim_lines").pluck().get()).toBe(
        db.prepare("SELECT COALESCE(SUM(json_array_length(data, '$.lines')), 0) FROM _claims_d").pluck().get(),
      );
      const after = views(db);
      expect([...after.keys()]).toEqual([...viewsBefore.keys(), "group_member_counts", "member_claim_counts", "members_in_several_groups", "procedure_totals"].sort());
      for (const [v, b] of viewsBefore) expect({ v, ...after.get(v)! }).toEqual({ v, ...b });
      expect(answers(db, guideQuestions())).toEqual(answersBefore);
    } finally {
      db.close();
    }
  });

  it("tells its progress on a terminal (claim versions counted, each index, the end), and writes nothing elsewhere", () => {
    const written: string[] = [];
    const db = openDatabase(oldSnapshot("tty.db"), { progress: terminalProgress({ isTTY: true, write: (s: string) => written.push(s) }) });
    db.close();
    const text = written.join("");
    expect(text).toMatch(/upgrading the snapshot \(schema 11\), claim lines from the claim versions: [\d,]+ of [\d,]+ \(100%\)/);
    expect(text).toMatch(/index 1 of \d+/);
    expect(text).toMatch(/upgraded the snapshot in \d+ s\n$/);
    const piped: string[] = [];
    openDatabase(oldSnapshot("pipe.db"), { progress: terminalProgress({ isTTY: false, write: (s: string) => piped.push(s) }) }).close();
    expect(piped).toEqual([]);
    // Nothing to convert, nothing told.
    openDatabase(join(dir, "tty.db"), { progress: terminalProgress({ isTTY: true, write: (s: string) => piped.push(s) }) }).close();
    expect(piped).toEqual([]);
  });
});

/**
 * Migration 12 (the counts the store keeps per group, member and line code; claim lines without
 * their claim's id) on a snapshot made by the code before it: test/fixtures/snapshot-schema11.db.gz
 * was made by benefits-sync at commit 741a7e3 (schema 11) with
 * test/fixtures/make-old-snapshot.mjs, three runs of a 100-member sandbox with a simulated
 * day between them. Converted in place: every view keeps its columns and rows, the new views
 * count what the old ones group, every guide question answers as its grouped form did before,
 * and the next run keeps the counts exact.
 */
import BetterSqlite3 from "better-sqlite3";
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, describe, expect, it } from "vitest";
import { groupedForms } from "../../../bench/guide-questions.js";
import { openDatabase } from "../../../src/store/file/database.js";
import { migrations } from "../../../src/store/schema/migrations.js";
import { terminalProgress } from "../../../src/store/schema/migration-progress.js";
import { guideQuestions, guideQuestionsGrouped } from "../../helpers/guide-questions.js";
import { answers, unpackSnapshot, views } from "../../helpers/old-snapshot.js";

const FIXTURE = new URL("../../fixtures/snapshot-schema11.db.gz", import.meta.url);
const dir = mkdtempSync(join(tmpdir(), "bsync-mig12-"));
afterAll(() => rmSync(dir, { recursive: true, force: true }));

const oldSnapshot = (name: string) => unpackSnapshot(FIXTURE, dir, name);

describe("migration 12 on a snapshot made before it (schema 11)", () => {
  it("keeps every view's columns and rows and every guide answer; the counts equal the groupings they replace", () => {
    const path = oldSnapshot("old.db");
    const before = new BetterSqlite3(path, { readonly: true });
    expect(before.pragma("user_version", { simple: true })).toBe(11);
    expect(before.prepare("SELECT 1 FROM pragma_table_info('_claim_lines') WHERE name = 'claim_id'").get()).toBeDefined();
    const viewsBefore = views(before);
    const answersBefore = answers(before, guideQuestionsGrouped());
    before.close();
    expect(viewsBefore.get("changes")!.rows.map((r) => r.op)).toEqual(expect.arrayContaining(["insert", "update", "delete"]));
    expect(viewsBefore.get("claim_lines")!.rows.length).toBeGreaterThan(300);

    const db = openDatabase(path);
    try {
      expect(db.pragma("user_version", { simple: true })).toBe(migrations.length);
      expect(db.prepare("SELECT 1 FROM pragma_table_info('_claim_lines') WHERE name = 'claim_id'").get()).toBeUndefined();
      expect(db.prepare("SELECT COUNT(*) FROM _claim_lines").pluck().get()).toBe(
        db.prepare("SELECT COALESCE(SUM(json_array_length(data, '$.lines')), 0) FROM _claims_d").pluck().get(),
      );
      const after = views(db);
      expect([...after.keys()]).toEqual([...viewsBefore.keys(), "group_member_counts", "member_claim_counts", "members_in_several_groups", "procedure_totals"].sort());
      for (const [v, b] of viewsBefore) expect({ v, ...after.get(v)! }).toEqual({ v, ...b });
      // The printed questions on the new views answer as the grouped ones did on the old snapshot.
      expect(answers(db, guideQuestions())).toEqual(answersBefore);
      // And as the grouped ones do on the new snapshot (which have rows to compare).
      for (const [name, sql] of groupedForms) {
        const printed = db.prepare(guideQuestions().get(name)!).all();
        expect(printed.length, name).toBeGreaterThan(0);
        expect({ name, rows: printed }).toEqual({ name, rows: db.prepare(sql).all() });
      }
    } finally {
      db.close();
    }
  });

  it("tells its progress on a terminal (the lines, each count, the end) and nothing when piped", () => {
    const written: string[] = [];
    openDatabase(oldSnapshot("tty.db"), { progress: terminalProgress({ isTTY: true, write: (s: string) => written.push(s) }) }).close();
    const text = written.join("");
    expect(text).toMatch(/upgrading the snapshot \(schema 12\), claim lines from the claim versions: [\d,]+ of [\d,]+ \(100%\)/);
    for (const t of ["_group_member_counts", "_several_groups", "_member_claim_counts", "_procedure_totals"]) expect(text).toContain(`counts (${t})`);
    expect(text).toMatch(/upgraded the snapshot in \d+ s\n$/);
    const piped: string[] = [];
    openDatabase(oldSnapshot("pipe.db"), { progress: terminalProgress({ isTTY: false, write: (s: string) => piped.push(s) }) }).close();
    expect(piped).toEqual([]);
  });
});

/**
 * Migration 11 (the analyst's snapshot at a million members) on a snapshot made by the code
 * before it: test/fixtures/snapshot-schema10.db.gz was made by benefits-sync at commit ab3fa89
 * (schema 10) with test/fixtures/make-snapshot-schema10.mjs, three runs of a 100-member sandbox
 * with a simulated day between them. Converted in place, every view keeps its columns and every
 * row, as of every run, and the conversion tells its progress on a terminal only.
 */
import BetterSqlite3 from "better-sqlite3";
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { gunzipSync } from "node:zlib";
import { afterAll, describe, expect, it } from "vitest";
import { openDatabase } from "../../../src/store/database.js";
import { terminalProgress } from "../../../src/store/migration-progress.js";
import { guideQuestions, guideQuestionsGrouped } from "../../helpers/guide-questions.js";

const FIXTURE = new URL("../../fixtures/snapshot-schema10.db.gz", import.meta.url);
const dir = mkdtempSync(join(tmpdir(), "bsync-mig11-"));
afterAll(() => rmSync(dir, { recursive: true, force: true }));

function oldSnapshot(name: string): string {
  const path = join(dir, name);
  writeFileSync(path, gunzipSync(readFileSync(FIXTURE)), { mode: 0o600 });
  return path;
}

type Row = Record<string, unknown>;

/** Every contract view: its columns, and all its rows in one order. */
function views(db: BetterSqlite3.Database): Map<string, { columns: string[]; rows: Row[] }> {
  const out = new Map<string, { columns: string[]; rows: Row[] }>();
  for (const v of db.prepare("SELECT name FROM sqlite_schema WHERE type = 'view' ORDER BY name").pluck().all() as string[]) {
    const columns = db.prepare(`SELECT name FROM pragma_table_info('${v}')`).pluck().all() as string[];
    const rows = db.prepare(`SELECT * FROM "${v}" ORDER BY ${columns.map((_, i) => i + 1).join(", ")}`).all() as Row[];
    out.set(v, { columns, rows });
  }
  return out;
}

/** Each guide question's answer, for every run and a few members and claims. */
function answers(db: BetterSqlite3.Database, questions = guideQuestions()): Map<string, Row[]> {
  const out = new Map<string, Row[]>();
  const members = db.prepare("SELECT memberId FROM claims GROUP BY memberId ORDER BY COUNT(*) DESC, memberId LIMIT 3").pluck().all();
  const claims = db.prepare("SELECT id FROM claims_history GROUP BY id ORDER BY COUNT(*) DESC, id LIMIT 3").pluck().all();
  for (const [name, sql] of questions) {
    const sets = sql.includes(":run_id") ? [1, 2, 3].map((run_id) => ({ run_id })) : sql.includes(":member_id") ? members.map((member_id) => ({ member_id })) : sql.includes(":claim_id") ? claims.map((claim_id) => ({ claim_id })) : [{}];
    for (const p of sets) out.set(`${name} ${JSON.stringify(p)}`, db.prepare(sql).all(p) as Row[]);
  }
  return out;
}

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
      expect(db.pragma("user_version", { simple: true })).toBe(12);
      expect(db.prepare("SELECT COUNT(*) FROM _claim_lines").pluck().get()).toBe(
        db.prepare("SELECT COALESCE(SUM(json_array_length(data, '$.lines')), 0) FROM _claims_v").pluck().get(),
      );
      const after = views(db);
      expect([...after.keys()]).toEqual([...viewsBefore.keys(), "group_member_counts", "member_claim_counts", "members_in_several_groups", "procedure_totals"].sort());
      for (const [v, b] of viewsBefore) expect({ v, ...after.get(v)! }).toEqual({ v, ...b });
      expect(answers(db)).toEqual(answersBefore);
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

/**
 * Migration 14 (a version row holds the typed columns only, its JSON and hash beside in
 * `_<resource>_d`) on a snapshot made by the code before it: test/fixtures/snapshot-schema13.db.gz
 * was made by benefits-sync at commit 0e684e1 (schema 13) with test/fixtures/make-old-snapshot.mjs,
 * three runs of a 100-member sandbox with a simulated day between them. Converted in place: every
 * view keeps its columns and rows, every guide answer and every count stands, and the next run
 * goes on from it.
 */
import BetterSqlite3 from "better-sqlite3";
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, describe, expect, it } from "vitest";
import { ownQuestions } from "../../../bench/own-questions.js";
import { openDatabase } from "../../../src/store/file/database.js";
import { terminalProgress } from "../../../src/store/schema/migration-progress.js";
import { migrations } from "../../../src/store/schema/migrations.js";
import { StoredResources } from "../../../src/store/schema/resources.js";
import { guideQuestions } from "../../helpers/guide-questions.js";
import { answers, unpackSnapshot, views } from "../../helpers/old-snapshot.js";

const FIXTURE = new URL("../../fixtures/snapshot-schema13.db.gz", import.meta.url);
const dir = mkdtempSync(join(tmpdir(), "bsync-mig14-"));
afterAll(() => rmSync(dir, { recursive: true, force: true }));

const oldSnapshot = (name: string) => unpackSnapshot(FIXTURE, dir, name);
const withoutGroupParam = new Map([...ownQuestions].filter(([, sql]) => !sql.includes(":group_id")));

describe("migration 14 on a snapshot made before it (schema 13)", () => {
  it("keeps every view's columns and rows, every guide answer and count; the JSON moves beside the rows", () => {
    const path = oldSnapshot("old.db");
    const before = new BetterSqlite3(path, { readonly: true });
    expect(before.pragma("user_version", { simple: true })).toBe(13);
    const versionsBefore = StoredResources.map((r) => before.prepare(`SELECT vid, hash, data FROM _${r}_v ORDER BY vid`).all());
    const viewsBefore = views(before);
    const answersBefore = answers(before, new Map([...guideQuestions(), ...withoutGroupParam]));
    const triggersBefore = before.prepare("SELECT COUNT(*) FROM sqlite_schema WHERE type = 'trigger'").pluck().get() as number;
    before.close();
    expect(viewsBefore.get("changes")!.rows.map((r) => r.op)).toEqual(expect.arrayContaining(["insert", "update", "delete"]));

    const db = openDatabase(path);
    try {
      expect(db.pragma("user_version", { simple: true })).toBe(migrations.length);
      for (const [i, r] of StoredResources.entries()) {
        expect(db.prepare(`SELECT 1 FROM pragma_table_info('_${r}_v') WHERE name IN ('data', 'hash')`).get(), r).toBeUndefined();
        expect(db.prepare(`SELECT vid, hash, data FROM _${r}_d ORDER BY vid`).all(), r).toEqual(versionsBefore[i]);
        expect(versionsBefore[i]!.length, r).toBeGreaterThan(0);
      }
      const after = views(db);
      expect([...after.keys()]).toEqual([...viewsBefore.keys()]);
      for (const [v, b] of viewsBefore) expect({ v, ...after.get(v)! }).toEqual({ v, ...b });
      expect(answers(db, new Map([...guideQuestions(), ...withoutGroupParam]))).toEqual(answersBefore);
      // Every trigger is made again (claim lines, counts), one per resource removes a version's JSON
      // with it, and the lines and the code totals each have one more (the JSON's own amend).
      expect(db.prepare("SELECT COUNT(*) FROM sqlite_schema WHERE type = 'trigger'").pluck().get()).toBe(triggersBefore + StoredResources.length + 2);
      // A version removed takes its JSON and its lines with it, and the counts follow.
      const claim = db.prepare("SELECT vid, id FROM _claims_v WHERE valid_to_run IS NULL AND vid IN (SELECT vid FROM _claim_lines) ORDER BY vid LIMIT 1").get() as { vid: number; id: string };
      const totals = () => db.prepare("SELECT SUM(lines) FROM procedure_totals").pluck().get() as number;
      const linesOf = db.prepare("SELECT COUNT(*) FROM _claim_lines WHERE vid = ?").pluck().get(claim.vid) as number;
      const totalBefore = totals();
      db.prepare("DELETE FROM _claims_v WHERE vid = ?").run(claim.vid);
      expect(db.prepare("SELECT COUNT(*) FROM _claims_d WHERE vid = ?").pluck().get(claim.vid)).toBe(0);
      expect(db.prepare("SELECT COUNT(*) FROM _claim_lines WHERE vid = ?").pluck().get(claim.vid)).toBe(0);
      expect(totals()).toBe(totalBefore - linesOf);
      expect(linesOf).toBeGreaterThan(0);
    } finally {
      db.close();
    }
  });

  it("tells its progress on a terminal (each table's versions, each index, the end) and nothing when piped", () => {
    const written: string[] = [];
    openDatabase(oldSnapshot("tty.db"), { progress: terminalProgress({ isTTY: true, write: (s: string) => written.push(s) }) }).close();
    const text = written.join("");
    for (const r of StoredResources) expect(text).toMatch(new RegExp(`upgrading the snapshot \\(schema 14\\), ${r} versions: [\\d,]+ of [\\d,]+ \\(100%\\)`));
    expect(text).toMatch(/index 1 of \d+/);
    expect(text).toMatch(/upgraded the snapshot in \d+ s\n$/);
    const piped: string[] = [];
    openDatabase(oldSnapshot("pipe.db"), { progress: terminalProgress({ isTTY: false, write: (s: string) => piped.push(s) }) }).close();
    expect(piped).toEqual([]);
  });
});

/**
 * The guide's questions give the same rows on the snapshot's views as on typed copies built from
 * the records' JSON alone (test/helpers/typed-copy.ts), after every run of a chain with simulated
 * days between them, and as of every earlier run: whatever the store does to answer them fast
 * (tables of its own, indexes, triggers), it changes no answer.
 */
import type { Database } from "better-sqlite3";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { groupedForms } from "../../../bench/guide-questions.js";
import { ownQuestions } from "../../../bench/own-questions.js";
import { guideQuestions, guideWorld } from "../../helpers/guide-questions.js";
import { ALL_CLAIMS } from "../../helpers/sandbox-truth.js";
import { syncStarted } from "../../helpers/temp-store.js";
import { typedCopy } from "../../helpers/typed-copy.js";

const guide = guideQuestions();
// The guide's questions and an analyst's own (bench/own-questions.ts), by name.
const questions = new Map([...guide, ...[...ownQuestions].map(([name, sql]) => [`own: ${name}`, sql] as const)]);
const RUNS = 4;

type Row = Record<string, unknown>;
interface Asked {
  afterRun: number;
  question: string;
  params: Record<string, unknown>;
  views: Row[];
  copy: Row[];
}

/** The parameters each question is asked with, after run `last`: every run so far, several members and claims. */
function paramSets(sql: string, copy: Database, last: number): Record<string, unknown>[] {
  const sets: Record<string, unknown>[] = [];
  if (sql.includes(":run_id")) for (let run = 1; run <= last; run++) sets.push({ run_id: run });
  if (sql.includes(":member_id")) {
    const members = copy.prepare("SELECT memberId FROM claims GROUP BY memberId ORDER BY COUNT(*) DESC, memberId LIMIT 3").pluck().all();
    for (const m of [...members, "no-such-member"]) sets.push({ member_id: m });
  }
  if (sql.includes(":claim_id")) {
    // Claims with the most versions (changed by the days), and one never changed.
    const claims = copy
      .prepare("SELECT id FROM claims_history GROUP BY id ORDER BY COUNT(*) DESC, id LIMIT 3")
      .pluck()
      .all();
    const once = copy.prepare("SELECT id FROM claims_history GROUP BY id HAVING COUNT(*) = 1 ORDER BY id LIMIT 1").pluck().all();
    for (const c of [...claims, ...once]) sets.push({ claim_id: c });
  }
  if (sql.includes(":group_id")) {
    const groups = copy.prepare("SELECT groupId FROM coverages WHERE groupId IS NOT NULL GROUP BY groupId ORDER BY COUNT(*) DESC, groupId LIMIT 2").pluck().all();
    for (const g of [...groups, "no-such-group"]) sets.push({ group_id: g });
  }
  return sets.length > 0 ? sets : [{}];
}

/** Every row of a view (the copy's columns, in one order): the whole view, not one question's slice. */
function wholeView(db: Database, view: string, columns: string[]): Row[] {
  return db.prepare(`SELECT ${columns.map((c) => `"${c}"`).join(", ")} FROM "${view}" ORDER BY ${columns.map((_, i) => i + 1).join(", ")}`).all() as Row[];
}
const wholeViews: { afterRun: number; view: string; views: Row[]; copy: Row[] }[] = [];

const asked: Asked[] = [];
const cleanups: (() => Promise<void> | void)[] = [];

beforeAll(async () => {
  const { sb, client, t, cleanup } = await guideWorld();
  cleanups.push(cleanup);
  for (let i = 1; i <= RUNS; i++) {
    if (i > 1) await sb.advance();
    const r = await syncStarted({ source: client, store: t.store, claimsWindow: ALL_CLAIMS });
    expect(r.status).toBe("succeeded");
    const copy = typedCopy(t.db);
    try {
      for (const view of copy.prepare("SELECT name FROM sqlite_schema WHERE type = 'table' ORDER BY name").pluck().all() as string[]) {
        const columns = copy.prepare(`SELECT name FROM pragma_table_info(?)`).pluck().all(view) as string[];
        wholeViews.push({ afterRun: r.runId, view, views: wholeView(t.db, view, columns), copy: wholeView(copy, view, columns) });
      }
      for (const [name, sql] of questions) {
        for (const params of paramSets(sql, copy, r.runId)) {
          const run = (db: Database) => db.prepare(sql).all(params) as Row[];
          asked.push({ afterRun: r.runId, question: name, params, views: run(t.db), copy: run(copy) });
          // A question that reads the store's counts, grouped from the snapshot's own views instead.
          const grouped = groupedForms.get(name);
          if (grouped) asked.push({ afterRun: r.runId, question: name, params, views: t.db.prepare(grouped).all(params) as Row[], copy: run(copy) });
        }
      }
    } finally {
      copy.close();
    }
  }
}, 120_000);

afterAll(async () => {
  for (const c of cleanups.reverse()) await c();
});

describe("the guide's questions: the same rows on the snapshot's views as on typed copies of the records' JSON", () => {
  it("every view, history included, holds the copy's rows after every run", () => {
    const names = new Set(wholeViews.map((w) => w.view));
    const resources = ["designs", "groups", "plans", "members", "coverages", "claims"].flatMap((r) => [r, `${r}_history`]);
    expect([...names]).toEqual(expect.arrayContaining([...resources, "claim_lines", "changes", "field_changes", "memberships", "procedure_totals"]));
    // A comparison of empty views proves nothing: after the last run every view has rows.
    for (const w of wholeViews.filter((x) => x.afterRun === RUNS)) expect(w.copy.length, w.view).toBeGreaterThan(0);
    for (const w of wholeViews) expect({ afterRun: w.afterRun, view: w.view, rows: w.views }).toEqual({ afterRun: w.afterRun, view: w.view, rows: w.copy });
  });

  it("every question was asked after every run, and the chain changed, inserted and deleted records", () => {
    expect(new Set(asked.map((a) => a.question))).toEqual(new Set(questions.keys()));
    expect(new Set(asked.map((a) => a.afterRun)).size).toBe(RUNS);
    const changes = asked.filter((a) => a.question === "changes-in-run" && a.afterRun === RUNS).flatMap((a) => a.copy);
    expect(new Set(changes.map((c) => c.op))).toEqual(new Set(["insert", "update", "delete"]));
  });

  it.each([...questions.keys()])("%s", (name) => {
    const mine = asked.filter((a) => a.question === name);
    // A comparison of two empty answers proves nothing: each question has rows somewhere.
    expect(mine.some((a) => a.copy.length > 0)).toBe(true);
    for (const a of mine) {
      expect({ afterRun: a.afterRun, params: a.params, rows: a.views }).toEqual({ afterRun: a.afterRun, params: a.params, rows: a.copy });
    }
  });
});

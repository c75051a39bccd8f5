/**
 * The guide's questions give the same rows on the snapshot's views as on typed copies built from
 * the records' JSON alone (test/helpers/typed-copy.ts), after every run of a chain with simulated
 * days between them, and as of every earlier run: whatever the store does to answer them fast
 * (tables of its own, indexes, triggers), it changes no answer.
 */
import type { Database } from "better-sqlite3";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { groupedForms } from "../../../bench/guide-questions.js";
import { guideQuestions, guideWorld } from "../../helpers/guide-questions.js";
import { ALL_CLAIMS } from "../../helpers/sandbox-truth.js";
import { syncStarted } from "../../helpers/temp-store.js";
import { typedCopy } from "../../helpers/typed-copy.js";

const questions = guideQuestions();
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
  return sets.length > 0 ? sets : [{}];
}

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

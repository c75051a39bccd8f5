/**
 * The analyst's questions, timed on a snapshot's views and on a typed, indexed copy of the same
 * rows made here (the baseline: what a warehouse-minded analyst would build by hand).
 *
 *   node dist/bench/analyst-worker.js questions DB   -> {questions: [{name, viewMs, copyMs, rows}]}
 *   node dist/bench/analyst-worker.js changes DB     -> {runs, ms: [per run], worstMs}
 *   node dist/bench/analyst-worker.js guide DB COPY  -> {questions: [{name, viewMs, copyMs, rows}]} (see analyst-guide.ts; the
 *     guide's questions, then an analyst's own, own-questions.ts, named `own: NAME`)
 *
 * Each question runs 5 times on each side (after one warm-up run); the median is reported.
 */
import BetterSqlite3 from "better-sqlite3";
import { dirname, join } from "node:path";
import { fileURLToPath } from "node:url";
import { timeGuide } from "./analyst-guide.js";
import { guideQuestions } from "./guide-questions.js";
import { ownQuestions } from "./own-questions.js";
import { typedColumns } from "../src/store/schema/analyst-schema.js";
import { StoredResources } from "../src/store/schema/resources.js";

const REPS = 5;

function time(db: BetterSqlite3.Database, sql: string, params: unknown[]): { ms: number; rows: number } {
  const stmt = db.prepare(sql);
  const rows = stmt.all(...params).length;
  const ms: number[] = [];
  for (let i = 0; i < REPS; i++) {
    const t0 = performance.now();
    stmt.all(...params);
    ms.push(performance.now() - t0);
  }
  return { ms: ms.sort((a, b) => a - b)[Math.floor(REPS / 2)]!, rows };
}

/** The questions of the issue, each on the views (`v`) and on the copy (`t_` tables). */
function questions(member: string): { name: string; sql: (p: string) => string; params: unknown[] }[] {
  return [
    { name: "claims of one member", sql: (p) => `SELECT * FROM ${p}claims WHERE memberId = ?`, params: [member] },
    {
      name: "paid per group per month",
      sql: (p) => `SELECT groupId, substr(serviceDateFrom, 1, 7) AS month, SUM(paidAmount_cents) AS paid FROM ${p}claims GROUP BY 1, 2`,
      params: [],
    },
    {
      name: "claims joined to members, top 5",
      sql: (p) =>
        `SELECT m.id, m.lastName, COUNT(*) AS n FROM ${p}claims c JOIN ${p}members m ON m.id = c.memberId GROUP BY m.id ORDER BY n DESC, m.id LIMIT 5`,
      params: [],
    },
    { name: "coverages by status", sql: (p) => `SELECT status, COUNT(*) FROM ${p}coverages GROUP BY status`, params: [] },
    { name: "changes of run 1 by resource and op", sql: (p) => `SELECT resource, op, COUNT(*) FROM ${p}changes WHERE run_id = 1 GROUP BY 1, 2`, params: [] },
  ];
}

/** The typed copy: the current rows' typed columns (no JSON), indexed like the snapshot. */
function makeCopy(db: BetterSqlite3.Database): void {
  db.exec("BEGIN");
  for (const r of StoredResources) {
    const cols = ["id", ...typedColumns(r).map((c) => `"${c.name}"`)];
    db.exec(`DROP TABLE IF EXISTS t_${r}; CREATE TABLE t_${r} AS SELECT ${cols.join(", ")} FROM "${r}"; CREATE UNIQUE INDEX t_${r}_id ON t_${r} (id);`);
  }
  for (const [r, c] of [["claims", "memberId"], ["claims", "groupId"], ["coverages", "memberId"], ["coverages", "status"]]) db.exec(`CREATE INDEX t_${r}_${c} ON t_${r} ("${c}")`);
  db.exec(`DROP TABLE IF EXISTS t_changes; CREATE TABLE t_changes AS SELECT run_id, resource, id, op FROM changes; CREATE INDEX t_changes_run ON t_changes (run_id);`);
  db.exec("COMMIT");
}

function main(): void {
  const [mode, path] = process.argv.slice(2) as [string, string];
  const db = new BetterSqlite3(path);
  db.pragma("cache_size = -32768");
  const out = (o: Record<string, unknown>) => process.stdout.write(`${JSON.stringify(o)}\n`);
  if (mode === "questions") {
    makeCopy(db);
    // A member with claims, picked the same way on both sides.
    const member = db.prepare("SELECT memberId FROM t_claims ORDER BY memberId LIMIT 1 OFFSET 1000").pluck().get() as string;
    const res = questions(member).map((q) => {
      const v = time(db, q.sql(""), q.params);
      const t = time(db, q.sql("t_"), q.params);
      if (v.rows !== t.rows) throw new Error(`${q.name}: ${v.rows} rows on the views, ${t.rows} on the copy`);
      return { name: q.name, viewMs: v.ms, copyMs: t.ms, rows: v.rows };
    });
    for (const r of StoredResources) db.exec(`DROP TABLE t_${r}`);
    db.exec("DROP TABLE t_changes");
    out({ questions: res });
  } else if (mode === "changes") {
    const runs = db.prepare("SELECT run_id FROM runs ORDER BY run_id").pluck().all() as number[];
    const ms = runs.map((id) => time(db, "SELECT resource, op, COUNT(*) FROM changes WHERE run_id = ? GROUP BY 1, 2", [id]));
    // Run 1 (the first load) lists every record; the bar is on the runs after it.
    const later = ms.slice(1);
    out({ runs: runs.length, ms: ms.map((m) => Math.round(m.ms * 10) / 10), rows: ms.map((m) => m.rows), worstMs: Math.max(...later.map((m) => m.ms)) });
  } else if (mode === "guide") {
    db.close();
    const root = join(dirname(fileURLToPath(import.meta.url)), "..", "..");
    // The guide's questions and an analyst's own (own-questions.ts), on one copy.
    const own = [...ownQuestions].map(([name, sql]) => [`own: ${name}`, sql] as const);
    out({ questions: timeGuide(path, process.argv[4]!, new Map([...guideQuestions(root), ...own])) });
    return;
  } else throw new Error(`unknown mode ${mode}`);
  db.close();
}

main();

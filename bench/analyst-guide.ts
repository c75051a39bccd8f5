/**
 * The guide's questions (README and docs/analyst-guide.md, as printed) timed on a snapshot's views
 * and on typed copies made in the same run: one plain table per view the guide reads, with the
 * view's name and columns and no JSON (`memberships` and the store's counts GROUP BY views over the typed tables),
 * indexed like the snapshot, in a database of its own, so the very same SQL text runs on both.
 */
import BetterSqlite3 from "better-sqlite3";
import { rmSync } from "node:fs";
import { IndexedColumns } from "../src/store/schema/analyst-schema.js";
import { StoredResources } from "../src/store/schema/resources.js";
import { countGroupings } from "./guide-questions.js";

export interface GuideTiming {
  readonly name: string;
  readonly viewMs: number;
  readonly copyMs: number;
  readonly rows: number;
}

/** The copy's tables: each the view's columns but `data` (the JSON) and `hash`. */
function makeCopy(snapshotPath: string, copyPath: string): BetterSqlite3.Database {
  for (const f of [copyPath, `${copyPath}-wal`, `${copyPath}-shm`, `${copyPath}-journal`]) rmSync(f, { force: true });
  const copy = new BetterSqlite3(copyPath);
  copy.pragma("journal_mode = OFF");
  copy.pragma("synchronous = OFF");
  copy.pragma("cache_size = -32768");
  copy.exec(`ATTACH '${snapshotPath.replace(/'/g, "''")}' AS s`);
  const columns = (v: string) =>
    (copy.prepare(`SELECT name FROM s.pragma_table_info(?)`).pluck().all(v) as string[]).filter((c) => c !== "data" && c !== "hash").map((c) => `"${c}"`);
  copy.exec("BEGIN");
  const views = [...StoredResources.flatMap((r) => [r, `${r}_history`]), "claim_lines", "changes", "field_changes", "runs", "run_counts"];
  for (const v of views) copy.exec(`CREATE TABLE "${v}" AS SELECT ${columns(v).join(", ")} FROM s."${v}"`);
  for (const r of StoredResources) {
    copy.exec(`CREATE UNIQUE INDEX "${r}_id" ON "${r}" (id); CREATE INDEX "${r}_history_id" ON "${r}_history" (id, valid_from_run)`);
    for (const c of IndexedColumns[r]) copy.exec(`CREATE INDEX "${r}_${c}" ON "${r}" ("${c}")`);
  }
  // An index on each id and foreign key of the derived views too (issue 41's baseline).
  copy.exec(`CREATE INDEX claim_lines_code ON claim_lines (code); CREATE INDEX changes_run ON changes (run_id);
             CREATE INDEX claim_lines_claim ON claim_lines (claim_id, line_no); CREATE INDEX claim_lines_member ON claim_lines (memberId);
             CREATE INDEX claim_lines_group ON claim_lines (groupId); CREATE INDEX changes_id ON changes (id);
             CREATE INDEX field_changes_run ON field_changes (run_id);
             CREATE VIEW memberships AS SELECT memberId, groupId, COUNT(*) AS coverages, SUM(status = 'active') AS active_coverages,
               MIN(startDate) AS first_start_date, CASE WHEN COUNT(endDate) < COUNT(*) THEN NULL ELSE MAX(endDate) END AS last_end_date
             FROM coverages GROUP BY memberId, groupId;`);
  // The counts the store keeps (rollups.ts), as typed tables alone give them: grouped.
  for (const [name, grouping] of countGroupings) copy.exec(`CREATE VIEW ${name} AS ${grouping}`);
  copy.exec("COMMIT");
  copy.exec("DETACH s; ANALYZE");
  return copy;
}

/** The fastest of `reps` runs after a warm-up (the "faster of two runs"), and the rows. */
function time(db: BetterSqlite3.Database, sql: string, params: Record<string, unknown>, reps: number): { ms: number; rows: unknown[] } {
  const stmt = db.prepare(sql);
  const rows = stmt.all(params);
  let best = Infinity;
  for (let i = 0; i < reps; i++) {
    const t0 = performance.now();
    stmt.all(params);
    best = Math.min(best, performance.now() - t0);
  }
  return { ms: best, rows };
}

/**
 * Every guide question on the snapshot at `snapshotPath` and on a copy made at `copyPath` (removed
 * after); the answers must be the same rows. Parameters: run 1 (the first load's changes), a member
 * with claims, a claim with the most versions and a group with coverages, picked on the copy.
 */
export function timeGuide(snapshotPath: string, copyPath: string, questions: Map<string, string>, reps = 2): GuideTiming[] {
  const copy = makeCopy(snapshotPath, copyPath);
  const snap = new BetterSqlite3(snapshotPath, { readonly: true });
  snap.pragma("cache_size = -32768");
  try {
    const params = {
      run_id: 1,
      member_id: copy.prepare("SELECT memberId FROM claims ORDER BY memberId LIMIT 1 OFFSET 1000").pluck().get(),
      claim_id: copy.prepare("SELECT id FROM claims_history GROUP BY id ORDER BY COUNT(*) DESC, id LIMIT 1").pluck().get(),
      group_id: copy.prepare("SELECT groupId FROM coverages WHERE groupId IS NOT NULL ORDER BY groupId LIMIT 1 OFFSET (SELECT COUNT(*) / 3 FROM coverages)").pluck().get(),
    };
    return [...questions].map(([name, sql]) => {
      const used = Object.fromEntries(Object.entries(params).filter(([k]) => sql.includes(`:${k}`)));
      const v = time(snap, sql, used, reps);
      const t = time(copy, sql, used, reps);
      if (JSON.stringify(v.rows) !== JSON.stringify(t.rows)) throw new Error(`${name}: the views and the copy answer differently`);
      return { name, viewMs: v.ms, copyMs: t.ms, rows: v.rows.length };
    });
  } finally {
    snap.close();
    copy.close();
    for (const f of [copyPath, `${copyPath}-wal`, `${copyPath}-shm`, `${copyPath}-journal`]) rmSync(f, { force: true });
  }
}

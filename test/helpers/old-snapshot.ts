/**
 * What the migration tests compare before and after a snapshot is converted in place: a gzipped
 * fixture made by older code (test/fixtures/make-old-snapshot.mjs), unpacked to a fresh file, and
 * every contract view's columns and rows, and each guide question's answers.
 */
import type BetterSqlite3 from "better-sqlite3";
import { readFileSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { gunzipSync } from "node:zlib";

/** The fixture `fixture` (a .db.gz) unpacked to `dir/name`, owner-only as a snapshot is. */
export function unpackSnapshot(fixture: URL, dir: string, name: string): string {
  const path = join(dir, name);
  writeFileSync(path, gunzipSync(readFileSync(fixture)), { mode: 0o600 });
  return path;
}

export type Row = Record<string, unknown>;

/** Every contract view: its columns, and all its rows in one order. */
export function views(db: BetterSqlite3.Database): Map<string, { columns: string[]; rows: Row[] }> {
  const out = new Map<string, { columns: string[]; rows: Row[] }>();
  for (const v of db.prepare("SELECT name FROM sqlite_schema WHERE type = 'view' ORDER BY name").pluck().all() as string[]) {
    const columns = db.prepare(`SELECT name FROM pragma_table_info('${v}')`).pluck().all() as string[];
    const rows = db.prepare(`SELECT * FROM "${v}" ORDER BY ${columns.map((_, i) => i + 1).join(", ")}`).all() as Row[];
    out.set(v, { columns, rows });
  }
  return out;
}

/** Each question's answer, for every run (1 to 3) and the three members and claims with the most rows. */
export function answers(db: BetterSqlite3.Database, questions: Map<string, string>): Map<string, Row[]> {
  const out = new Map<string, Row[]>();
  const members = db.prepare("SELECT memberId FROM claims GROUP BY memberId ORDER BY COUNT(*) DESC, memberId LIMIT 3").pluck().all();
  const claims = db.prepare("SELECT id FROM claims_history GROUP BY id ORDER BY COUNT(*) DESC, id LIMIT 3").pluck().all();
  for (const [name, sql] of questions) {
    const sets = sql.includes(":run_id") ? [1, 2, 3].map((run_id) => ({ run_id })) : sql.includes(":member_id") ? members.map((member_id) => ({ member_id })) : sql.includes(":claim_id") ? claims.map((claim_id) => ({ claim_id })) : [{}];
    for (const p of sets) out.set(`${name} ${JSON.stringify(p)}`, db.prepare(sql).all(p) as Row[]);
  }
  return out;
}

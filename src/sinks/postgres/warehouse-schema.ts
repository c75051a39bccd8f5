/**
 * The warehouse's tables, in one schema (default `benefits_sync`), created on first load:
 *
 * - `<resource>`: the current state, one row per live record: `id` (primary key), the documented
 *   scalar fields as typed columns named as in the SQLite views (`"memberId"`, `"paidAmount"`
 *   NUMERIC, `"serviceDateFrom"` DATE), `data` (the whole record, JSONB), `valid_from_run`, and
 *   how the version began (`op`, `changed_fields`).
 * - `<resource>_closed`: the versions that ended (`valid_to_run` set); primary key
 *   `(id, valid_from_run)`.
 * - `<resource>_history` (a view): every version, the current ones with `valid_to_run` null. A
 *   version is written once, where it lives: a first load writes each record once, as a plain
 *   copy would, and a later one moves only the versions it ends.
 * - `_loads`: the load ledger: one row per snapshot run the warehouse holds, written in the
 *   transaction that applied it. `_meta`: the snapshot it is fed from, and this layout.
 * - What the snapshot's views give an analyst besides: `claim_lines` (with `_closed` and
 *   `_history`), `field_changes`, the `changes` and `memberships` views (warehouse-derived.ts),
 *   `runs` and `run_counts` (warehouse-runs.ts).
 */
import type pg from "pg";
import { StoredResources, type StoredResource } from "../../store/schema/resources.js";
import { IndexedColumns } from "../../store/schema/analyst-schema.js";
import { columnName } from "../../store/schema/resources.js";
import { warehouseColumns } from "./pg-columns.js";
import { derivedDdl } from "./warehouse-derived.js";
import { runsDdl } from "./warehouse-runs.js";

export { warehouseColumns };

export const q = (ident: string): string => `"${ident.replace(/"/g, '""')}"`;

/**
 * The layout `_meta` records: a warehouse of another layout is refused, with what to do. 3: claim
 * lines, runs, run counts and field changes; `createdAt` as timestamptz.
 */
export const WAREHOUSE_LAYOUT = "3";

export function schemaDdl(schema: string): string {
  const s = q(schema);
  const parts = [
    `CREATE SCHEMA IF NOT EXISTS ${s}`,
    `CREATE TABLE IF NOT EXISTS ${s}._meta (key text PRIMARY KEY, value text NOT NULL)`,
    `CREATE TABLE IF NOT EXISTS ${s}._loads (run_id bigint PRIMARY KEY, changes bigint NOT NULL, loaded_at timestamptz NOT NULL DEFAULT now())`,
  ];
  for (const r of StoredResources) {
    const cols = warehouseColumns(r).map((c) => `${c.name} ${c.type}`).join(", ");
    const names = warehouseColumns(r).map((c) => c.name).join(", ");
    parts.push(
      `CREATE TABLE IF NOT EXISTS ${s}.${q(r)} (id text PRIMARY KEY, ${cols}, data jsonb NOT NULL, valid_from_run bigint NOT NULL, op text NOT NULL, changed_fields jsonb)`,
      `CREATE TABLE IF NOT EXISTS ${s}.${q(`${r}_closed`)} (id text NOT NULL, valid_from_run bigint NOT NULL, valid_to_run bigint NOT NULL, op text NOT NULL, changed_fields jsonb, ${cols}, data jsonb NOT NULL, PRIMARY KEY (id, valid_from_run))`,
      `CREATE OR REPLACE VIEW ${s}.${q(`${r}_history`)} AS ` +
        `SELECT id, valid_from_run, NULL::bigint AS valid_to_run, op, changed_fields, ${names}, data FROM ${s}.${q(r)} UNION ALL ` +
        `SELECT id, valid_from_run, valid_to_run, op, changed_fields, ${names}, data FROM ${s}.${q(`${r}_closed`)}`,
    );
    for (const c of IndexedColumns[r]) parts.push(indexDdl(s, r, c));
  }
  parts.push(...derivedDdl(s), ...runsDdl(s));
  return parts.join(";\n");
}

/**
 * Refuse a warehouse laid out by an earlier benefits-sync (history kept in tables), before
 * anything is created in it: `schemaDdl` would fail on it with a message that says nothing useful.
 */
export async function checkLayout(client: pg.Client, schema: string): Promise<void> {
  const meta = await client.query("SELECT to_regclass($1) IS NOT NULL AS ok", [`${q(schema)}._meta`]);
  if (!meta.rows[0]?.ok) return;
  const r = await client.query(`SELECT value FROM ${q(schema)}._meta WHERE key = 'layout'`);
  const layout = (r.rows[0]?.value as string | undefined) ?? "1";
  if (layout === WAREHOUSE_LAYOUT) return;
  throw Object.assign(
    new Error(
      `the warehouse schema ${schema} has layout ${layout}, made by another version of benefits-sync (this one writes layout ${WAREHOUSE_LAYOUT}). ` +
        `Load into a new schema (?schema=NAME in the URL), or drop this one (DROP SCHEMA ${q(schema)} CASCADE): the next load fills it again from the snapshot`,
    ),
    { code: "WAREHOUSE_LAYOUT" },
  );
}

const indexDdl = (s: string, table: string, column: string) =>
  `CREATE INDEX IF NOT EXISTS ${q(`${table}_${columnName(column)}`)} ON ${s}.${q(table)} (${q(columnName(column))})`;
const pkDdl = (s: string, table: string) => `ALTER TABLE ${s}.${q(table)} ADD CONSTRAINT ${q(`${table}_pkey`)} PRIMARY KEY (${PrimaryKeys[table] ?? (table.endsWith("_closed") ? "id, valid_from_run" : "id")})`;

/** The primary keys that are not a resource's (`id`, or `id, valid_from_run` when closed). */
const PrimaryKeys: Record<string, string> = { claim_lines: "claim_id, line_no", claim_lines_closed: "claim_id, valid_from_run, line_no" };

/**
 * Drop a table's primary key and the indexes on `columns`, inside the load's transaction, before a
 * bulk insert into the empty table; {@link createIndexes} builds them again before the commit.
 */
export async function dropIndexes(client: pg.Client, s: string, table: string, columns: readonly string[]): Promise<void> {
  await client.query(`ALTER TABLE ${s}.${q(table)} DROP CONSTRAINT ${q(`${table}_pkey`)}`);
  for (const c of columns) await client.query(`DROP INDEX ${s}.${q(`${table}_${columnName(c)}`)}`);
}

export async function createIndexes(client: pg.Client, s: string, table: string, columns: readonly string[]): Promise<void> {
  await client.query(pkDdl(s, table));
  for (const c of columns) await client.query(indexDdl(s, table, c));
}

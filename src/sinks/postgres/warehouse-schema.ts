/**
 * The warehouse's tables, in one schema (default `benefits_sync`), created on first load:
 *
 * - `<resource>`: the current state, one row per live record: `id` (primary key), the documented
 *   scalar fields as typed columns named as in the SQLite views (`"memberId"`, `"paidAmount"`
 *   NUMERIC, `"serviceDateFrom"` DATE), `data` (the whole record, JSONB) and `valid_from_run`.
 * - `<resource>_history`: every version: the same columns with `valid_from_run`, `valid_to_run`
 *   (null while current), `op` and `changed_fields`; primary key `(id, valid_from_run)`.
 * - `_loads`: the load ledger: one row per snapshot run the warehouse holds, written in the
 *   transaction that applied it. `_meta`: the snapshot it is fed from.
 */
import type pg from "pg";
import { StoredResources, type StoredResource } from "../../store/resources.js";
import { IndexedColumns } from "../../store/analyst-schema.js";
import { columnName } from "../../store/resources.js";
import { typedFields, type FieldType } from "../typed-fields.js";

export const q = (ident: string): string => `"${ident.replace(/"/g, '""')}"`;

const PG_TYPE: Record<FieldType, string> = { text: "text", date: "date", decimal: "numeric" };

/** The typed columns of a resource's tables, in order: `[quoted name, type]`. */
export function warehouseColumns(r: StoredResource): { name: string; type: string }[] {
  return typedFields(r).map((f) => ({ name: q(f.name), type: PG_TYPE[f.type] }));
}

export function schemaDdl(schema: string): string {
  const s = q(schema);
  const parts = [
    `CREATE SCHEMA IF NOT EXISTS ${s}`,
    `CREATE TABLE IF NOT EXISTS ${s}._meta (key text PRIMARY KEY, value text NOT NULL)`,
    `CREATE TABLE IF NOT EXISTS ${s}._loads (run_id bigint PRIMARY KEY, changes bigint NOT NULL, loaded_at timestamptz NOT NULL DEFAULT now())`,
  ];
  for (const r of StoredResources) {
    const cols = warehouseColumns(r).map((c) => `${c.name} ${c.type}`).join(", ");
    parts.push(
      `CREATE TABLE IF NOT EXISTS ${s}.${q(r)} (id text PRIMARY KEY, ${cols}, data jsonb NOT NULL, valid_from_run bigint NOT NULL)`,
      `CREATE TABLE IF NOT EXISTS ${s}.${q(`${r}_history`)} (id text NOT NULL, valid_from_run bigint NOT NULL, valid_to_run bigint, op text NOT NULL, changed_fields jsonb, ${cols}, data jsonb NOT NULL, PRIMARY KEY (id, valid_from_run))`,
    );
    for (const c of IndexedColumns[r]) parts.push(indexDdl(s, r, c));
  }
  return parts.join(";\n");
}

const indexDdl = (s: string, table: string, column: string) =>
  `CREATE INDEX IF NOT EXISTS ${q(`${table}_${columnName(column)}`)} ON ${s}.${q(table)} (${q(columnName(column))})`;
const pkDdl = (s: string, table: string) => `ALTER TABLE ${s}.${q(table)} ADD CONSTRAINT ${q(`${table}_pkey`)} PRIMARY KEY (${table.endsWith("_history") ? "id, valid_from_run" : "id"})`;

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

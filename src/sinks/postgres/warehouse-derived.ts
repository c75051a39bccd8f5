/**
 * What the snapshot derives for an analyst, kept in the warehouse as tables filled set-wise by SQL
 * inside the load's transaction (no row passes through this process twice):
 *
 * - `claim_lines`: one row per line of a current claim, numbered from 1 in the claim's order (as
 *   the snapshot's `claim_lines` view numbers them); `claim_lines_closed` the lines of the claim
 *   versions that ended, `claim_lines_history` both. They change with their claim, in its load.
 * - `field_changes`: one row per changed field of an update, with the value before and after
 *   (jsonb; the whole record for `(record)`), as the snapshot's `field_changes` view.
 * - the views `changes` (every insert, update and delete, by run) and `memberships` (a member's
 *   coverages per group), as in the snapshot.
 */
import type pg from "pg";
import { StoredResources, ViewColumns, type StoredResource } from "../../store/schema/resources.js";

const q = (ident: string): string => `"${ident.replace(/"/g, '""')}"`;

/** A line's amount as the claims' money columns take it: a decimal string with at most two places, else NULL. */
const lineAmount = `CASE WHEN jsonb_typeof(l.line->'amount') = 'string' AND l.line->>'amount' ~ '^-?[0-9]{1,16}(\\.[0-9]{1,2})?$' THEN (l.line->>'amount')::numeric END`;
const lineCols = `claim_id text NOT NULL, line_no integer NOT NULL, "memberId" text, "groupId" text, "serviceDateFrom" date, code text, amount numeric`;

export function derivedDdl(s: string): string[] {
  const union = (f: (r: StoredResource) => string) => StoredResources.map(f).join(" UNION ALL ");
  return [
    `CREATE TABLE IF NOT EXISTS ${s}.claim_lines (${lineCols}, valid_from_run bigint NOT NULL, PRIMARY KEY (claim_id, line_no))`,
    `CREATE TABLE IF NOT EXISTS ${s}.claim_lines_closed (${lineCols}, valid_from_run bigint NOT NULL, valid_to_run bigint NOT NULL, PRIMARY KEY (claim_id, valid_from_run, line_no))`,
    `CREATE OR REPLACE VIEW ${s}.claim_lines_history AS ` +
      `SELECT claim_id, line_no, valid_from_run, NULL::bigint AS valid_to_run, "memberId", "groupId", "serviceDateFrom", code, amount FROM ${s}.claim_lines UNION ALL ` +
      `SELECT claim_id, line_no, valid_from_run, valid_to_run, "memberId", "groupId", "serviceDateFrom", code, amount FROM ${s}.claim_lines_closed`,
    `CREATE TABLE IF NOT EXISTS ${s}.field_changes (run_id bigint NOT NULL, resource text NOT NULL, id text NOT NULL, field text NOT NULL, column_name text, old_value jsonb, new_value jsonb)`,
    `CREATE INDEX IF NOT EXISTS field_changes_run ON ${s}.field_changes (run_id)`,
    // A version closed with no successor beginning in the run that closed it was deleted there.
    `CREATE OR REPLACE VIEW ${s}.changes AS ${union(
      (r) =>
        `SELECT valid_from_run AS run_id, '${r}'::text AS resource, id, op, changed_fields FROM ${s}.${q(`${r}_history`)} UNION ALL ` +
        `SELECT c.valid_to_run, '${r}', c.id, 'delete', NULL FROM ${s}.${q(`${r}_closed`)} c WHERE NOT EXISTS ` +
        `(SELECT 1 FROM ${s}.${q(`${r}_history`)} n WHERE n.id = c.id AND n.valid_from_run = c.valid_to_run)`,
    )}`,
    `CREATE OR REPLACE VIEW ${s}.memberships AS SELECT "memberId", "groupId", COUNT(*) AS coverages, COUNT(*) FILTER (WHERE status = 'active') AS active_coverages, ` +
      `MIN("startDate") AS first_start_date, CASE WHEN COUNT("endDate") < COUNT(*) THEN NULL ELSE MAX("endDate") END AS last_end_date ` +
      `FROM ${s}.coverages GROUP BY "memberId", "groupId"`,
  ];
}

/** The lines of the claim versions in `from` (an alias `c` with `join` narrowing it), as rows of a claim_lines table. */
const linesOf = (from: string, extra: string) =>
  `SELECT c.id, l.n, c."memberId", c."groupId", c."serviceDateFrom", l.line->>'code', ${lineAmount}, c.valid_from_run${extra} FROM ${from} ` +
  `CROSS JOIN LATERAL jsonb_array_elements(CASE jsonb_typeof(c.data->'lines') WHEN 'array' THEN c.data->'lines' ELSE '[]'::jsonb END) WITH ORDINALITY l(line, n)`;
const cols = `claim_id, line_no, "memberId", "groupId", "serviceDateFrom", code, amount, valid_from_run`;

/**
 * The claim lines after a load of claims. `stage` (the load's changes; absent for a first load,
 * which has only inserts) names the claims that changed: their ended versions' lines are closed,
 * their current lines replaced. A first load fills the empty table before its key is built.
 */
export async function loadClaimLines(client: pg.Client, s: string, runs: readonly number[], stage?: string): Promise<void> {
  if (!stage) {
    await client.query(`ALTER TABLE ${s}.claim_lines DROP CONSTRAINT claim_lines_pkey`);
    await client.query(`INSERT INTO ${s}.claim_lines (${cols}) ${linesOf(`${s}.claims c`, "")}`);
    await client.query(`ALTER TABLE ${s}.claim_lines ADD CONSTRAINT claim_lines_pkey PRIMARY KEY (claim_id, line_no)`);
    return;
  }
  const changed = `(SELECT DISTINCT id FROM ${stage})`;
  await client.query(
    `INSERT INTO ${s}.claim_lines_closed (${cols}, valid_to_run) ${linesOf(`${s}.claims_closed c JOIN ${changed} d ON d.id = c.id`, ", c.valid_to_run")} WHERE c.valid_to_run = ANY($1::bigint[])`,
    [runs],
  );
  await client.query(`DELETE FROM ${s}.claim_lines l USING ${changed} d WHERE l.claim_id = d.id`);
  await client.query(`INSERT INTO ${s}.claim_lines (${cols}) ${linesOf(`${s}.claims c JOIN ${changed} d ON d.id = c.id`, "")}`);
}

/** The field changes of the load's updates of `r` (named in `stage`), each with its value before and after. */
export async function loadFieldChanges(client: pg.Client, s: string, r: StoredResource, stage: string): Promise<void> {
  const value = (alias: string) => `CASE f.field WHEN '(record)' THEN ${alias}.data ELSE NULLIF(${alias}.data #> string_to_array(f.field, '.'), 'null'::jsonb) END`;
  await client.query(
    `INSERT INTO ${s}.field_changes (run_id, resource, id, field, column_name, old_value, new_value) ` +
      `SELECT v.valid_from_run, $1, v.id, f.field, CASE WHEN f.field = ANY($2::text[]) THEN replace(f.field, '.', '_') END, ${value("p")}, ${value("v")} ` +
      `FROM (SELECT DISTINCT id, run_id FROM ${stage} WHERE op = 'update') u ` +
      `JOIN ${s}.${q(`${r}_history`)} v ON v.id = u.id AND v.valid_from_run = u.run_id AND v.op = 'update' ` +
      `JOIN ${s}.${q(`${r}_closed`)} p ON p.id = v.id AND p.valid_to_run = v.valid_from_run ` +
      `CROSS JOIN LATERAL jsonb_array_elements_text(CASE jsonb_typeof(v.changed_fields) WHEN 'array' THEN v.changed_fields ELSE '[]'::jsonb END) f(field)`,
    [r, ViewColumns[r]],
  );
}

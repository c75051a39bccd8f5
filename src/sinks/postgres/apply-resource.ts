/**
 * One resource's part of a warehouse load, inside the load's transaction: the changes of `runs`
 * go in by COPY and are applied set-wise.
 *
 * - The general path: COPY into a temporary staging table; close the open history version of every
 *   changed id at its first change in the load; add a version per insert or update, open until the
 *   id's next change in the load; replace the changed ids' current rows with their last change.
 * - A first load (both tables empty, one run): no staging and no sort, since each id changes once:
 *   COPY straight into the history table, then the current rows are its rows.
 *
 * An empty table takes its rows without its indexes (primary key included), built once the rows
 * are in: maintained row by row, random keys cost several times the load itself.
 */
import type pg from "pg";
import { Readable } from "node:stream";
import { pipeline } from "node:stream/promises";
import { from as copyFrom } from "pg-copy-streams";
import { IndexedColumns } from "../../store/analyst-schema.js";
import type { StoredResource } from "../../store/resources.js";
import type { Delta } from "../run-deltas.js";
import type { DeltaReader } from "../sink.js";
import { asDate, asDecimal, asText, typedFields, valueAt } from "../typed-fields.js";
import { copyField, copyJson, copyJsonText } from "./copy-text.js";
import { createIndexes, dropIndexes, q, warehouseColumns } from "./warehouse-schema.js";

const OP_ORDER = { insert: 0, update: 1, delete: 2 } as const;

/** The changes applied, counted per run into `perRun`; returns the resource's count. */
export async function applyResource(
  client: pg.Client,
  s: string,
  r: StoredResource,
  deltas: DeltaReader,
  runs: readonly number[],
  perRun: Map<number, number>,
): Promise<number> {
  const names = warehouseColumns(r).map((c) => c.name);
  const list = names.join(", ");
  const cur = `${s}.${q(r)}`;
  const hist = `${s}.${q(`${r}_history`)}`;
  const isEmpty = async (t: string) => !(await client.query(`SELECT EXISTS (SELECT 1 FROM ${t}) AS any`)).rows[0]?.any;
  const histEmpty = await isEmpty(hist);
  const curEmpty = await isEmpty(cur);
  // One run: each id changes at most once, so no version has a successor in this load and an
  // id's last change is its only one.
  const oneRun = runs.length === 1;
  if (oneRun && histEmpty && curEmpty) {
    await dropIndexes(client, s, `${r}_history`, []);
    // Nothing is there to delete: a delete's record has no version here to close.
    const count = await copyDeltas(client, `${hist} (valid_from_run, op, id, changed_fields, ${list}, data)`, r, deltas(runs, { typed: true }), perRun, false);
    await createIndexes(client, s, `${r}_history`, []);
    if (count === 0) return 0;
    await dropIndexes(client, s, r, IndexedColumns[r]);
    await client.query(`INSERT INTO ${cur} (id, ${list}, data, valid_from_run) SELECT id, ${list}, data, valid_from_run FROM ${hist}`);
    await createIndexes(client, s, r, IndexedColumns[r]);
    return count;
  }
  const stage = q(`_stage_${r}`);
  await client.query(
    `CREATE TEMP TABLE ${stage} (ord smallint NOT NULL, run_id bigint NOT NULL, op text NOT NULL, id text NOT NULL, changed_fields jsonb, ` +
      `${warehouseColumns(r).map((c) => `${c.name} ${c.type}`).join(", ")}, data jsonb NOT NULL) ON COMMIT DROP`,
  );
  const count = await copyDeltas(client, `${stage} (ord, run_id, op, id, changed_fields, ${list}, data)`, r, deltas(runs, { typed: true }), perRun, true);
  if (count === 0) return 0;
  if (histEmpty) await dropIndexes(client, s, `${r}_history`, []);
  else {
    await client.query(
      `UPDATE ${hist} h SET valid_to_run = f.run_id FROM (SELECT DISTINCT ON (id) id, run_id FROM ${stage} ORDER BY id, run_id, ord) f ` +
        `WHERE h.id = f.id AND h.valid_to_run IS NULL`,
    );
  }
  await client.query(
    oneRun
      ? `INSERT INTO ${hist} (id, valid_from_run, valid_to_run, op, changed_fields, ${list}, data) ` +
          `SELECT id, run_id, NULL, op, changed_fields, ${list}, data FROM ${stage} WHERE op <> 'delete'`
      : `INSERT INTO ${hist} (id, valid_from_run, valid_to_run, op, changed_fields, ${list}, data) ` +
          `SELECT id, run_id, next_run, op, changed_fields, ${list}, data FROM ` +
          `(SELECT *, lead(run_id) OVER (PARTITION BY id ORDER BY run_id, ord) AS next_run FROM ${stage}) x WHERE op <> 'delete'`,
  );
  if (histEmpty) await createIndexes(client, s, `${r}_history`, []);
  if (curEmpty) await dropIndexes(client, s, r, IndexedColumns[r]);
  else await client.query(`DELETE FROM ${cur} c USING (SELECT DISTINCT id FROM ${stage}) d WHERE c.id = d.id`);
  await client.query(
    oneRun
      ? `INSERT INTO ${cur} (id, ${list}, data, valid_from_run) SELECT id, ${list}, data, run_id FROM ${stage} WHERE op <> 'delete'`
      : `INSERT INTO ${cur} (id, ${list}, data, valid_from_run) SELECT id, ${list}, data, run_id FROM ` +
          `(SELECT DISTINCT ON (id) * FROM ${stage} ORDER BY id, run_id DESC, ord DESC) l WHERE op <> 'delete'`,
  );
  if (curEmpty) await createIndexes(client, s, r, IndexedColumns[r]);
  await client.query(`DROP TABLE ${stage}`);
  return count;
}

/**
 * COPY the changes into `target` (its column list given), a row per change: with `withOrd`,
 * `ord, run_id, op, ...` and every change (the staging table); without, `run_id, op, ...` and the
 * deletes left out (the history table of a first load). Returns the changes read.
 */
async function copyDeltas(client: pg.Client, target: string, r: StoredResource, deltas: Iterable<Delta>, perRun: Map<number, number>, withOrd: boolean): Promise<number> {
  const fields = typedFields(r);
  const convert = fields.map((f) => (f.type === "date" ? asDate : f.type === "decimal" ? asDecimal : asText));
  let count = 0;
  function* chunks(): Generator<string> {
    let buf: string[] = [];
    let size = 0;
    for (const d of deltas) {
      count++;
      perRun.set(d.runId, (perRun.get(d.runId) ?? 0) + 1);
      if (!withOrd && d.op === "delete") continue;
      let line = `${withOrd ? `${OP_ORDER[d.op]}\t` : ""}${d.runId}\t${d.op}\t${copyField(d.id)}\t${copyJson(d.changedFields)}`;
      for (let i = 0; i < fields.length; i++) line += `\t${copyField(convert[i]!(d.typed ? d.typed[i] : valueAt(d.data, fields[i]!.path)))}`;
      line += `\t${d.text !== undefined ? copyJsonText(d.text, () => d.data) : copyJson(d.data)}\n`;
      buf.push(line);
      size += line.length;
      if (size >= 1 << 16) {
        yield buf.join("");
        buf = [];
        size = 0;
      }
    }
    if (buf.length) yield buf.join("");
  }
  await pipeline(Readable.from(chunks(), { objectMode: false }), client.query(copyFrom(`COPY ${target} FROM STDIN`)));
  return count;
}

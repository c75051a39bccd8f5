/**
 * One resource's part of a warehouse load, inside the load's transaction: the changes of `runs`
 * go in by COPY and are applied set-wise. A version lives in one place: the current table while
 * it is current, `<r>_closed` once it ended (`<r>_history` is the view of both).
 *
 * - The general path: COPY into a temporary staging table; move the current version of every
 *   changed id to the closed table, ended at the id's first change in the load; add the load's
 *   versions that a later change in the load ends to the closed table; put each id's last change
 *   (unless a delete) in the current table.
 * - A first load (an empty current table, one run): no staging and no sort, since each id changes
 *   once: COPY straight into the current table. Each record is written once, as a plain copy
 *   would write it.
 * - Then, in SQL, what the versions imply: the claims' lines, and the field changes of updates.
 *
 * An empty table takes its rows without its indexes (primary key included), built once the rows
 * are in: maintained row by row, random keys cost several times the load itself.
 */
import type pg from "pg";
import { Readable } from "node:stream";
import { pipeline } from "node:stream/promises";
import { from as copyFrom } from "pg-copy-streams";
import { IndexedColumns } from "../../store/schema/analyst-schema.js";
import type { StoredResource } from "../../store/schema/resources.js";
import type { Delta } from "../run-deltas.js";
import type { DeltaReader } from "../sink.js";
import { typedFields, valueAt } from "../typed-fields.js";
import { copyField, copyJson, copyJsonText } from "./copy-text.js";
import { loadClaimLines, loadFieldChanges } from "./warehouse-derived.js";
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
  const closed = `${s}.${q(`${r}_closed`)}`;
  const isEmpty = async (t: string) => !(await client.query(`SELECT EXISTS (SELECT 1 FROM ${t}) AS any`)).rows[0]?.any;
  const curEmpty = await isEmpty(cur);
  // One run: each id changes at most once, so no version of the load has a successor in it, and
  // an id's last change is its only one.
  const oneRun = runs.length === 1;
  if (oneRun && curEmpty) {
    await dropIndexes(client, s, r, IndexedColumns[r]);
    // Nothing is current: a delete has no version here to end, and is only counted.
    const count = await copyDeltas(client, `${cur} (valid_from_run, op, id, changed_fields, ${list}, data)`, r, deltas(runs, { typed: true }), perRun, false);
    await createIndexes(client, s, r, IndexedColumns[r]);
    if (r === "claims") await loadClaimLines(client, s, runs);
    return count;
  }
  const stage = q(`_stage_${r}`);
  await client.query(
    `CREATE TEMP TABLE ${stage} (ord smallint NOT NULL, run_id bigint NOT NULL, op text NOT NULL, id text NOT NULL, changed_fields jsonb, ` +
      `${warehouseColumns(r).map((c) => `${c.name} ${c.type}`).join(", ")}, data jsonb NOT NULL) ON COMMIT DROP`,
  );
  const count = await copyDeltas(client, `${stage} (ord, run_id, op, id, changed_fields, ${list}, data)`, r, deltas(runs, { typed: true }), perRun, true);
  if (count === 0) return 0;
  const closedEmpty = await isEmpty(closed);
  if (closedEmpty) await dropIndexes(client, s, `${r}_closed`, []);
  if (!curEmpty) {
    // The current version of each changed id ends at the id's first change in this load.
    await client.query(
      `INSERT INTO ${closed} (id, valid_from_run, valid_to_run, op, changed_fields, ${list}, data) ` +
        `SELECT c.id, c.valid_from_run, f.run_id, c.op, c.changed_fields, ${names.map((n) => `c.${n}`).join(", ")}, c.data FROM ${cur} c ` +
        `JOIN (SELECT DISTINCT ON (id) id, run_id FROM ${stage} ORDER BY id, run_id, ord) f ON f.id = c.id`,
    );
    await client.query(`DELETE FROM ${cur} c USING (SELECT DISTINCT id FROM ${stage}) d WHERE c.id = d.id`);
  }
  if (!oneRun) {
    // Versions of this load that a later change in it ends.
    await client.query(
      `INSERT INTO ${closed} (id, valid_from_run, valid_to_run, op, changed_fields, ${list}, data) ` +
        `SELECT id, run_id, next_run, op, changed_fields, ${list}, data FROM ` +
        `(SELECT *, lead(run_id) OVER (PARTITION BY id ORDER BY run_id, ord) AS next_run FROM ${stage}) x WHERE op <> 'delete' AND next_run IS NOT NULL`,
    );
  }
  if (closedEmpty) await createIndexes(client, s, `${r}_closed`, []);
  if (curEmpty) await dropIndexes(client, s, r, IndexedColumns[r]);
  await client.query(
    `INSERT INTO ${cur} (id, ${list}, data, valid_from_run, op, changed_fields) SELECT id, ${list}, data, run_id, op, changed_fields FROM ` +
      (oneRun ? `${stage} WHERE op <> 'delete'` : `(SELECT DISTINCT ON (id) * FROM ${stage} ORDER BY id, run_id DESC, ord DESC) l WHERE op <> 'delete'`),
  );
  if (curEmpty) await createIndexes(client, s, r, IndexedColumns[r]);
  if (r === "claims") await loadClaimLines(client, s, runs, stage);
  await loadFieldChanges(client, s, r, stage);
  await client.query(`DROP TABLE ${stage}`);
  return count;
}

/**
 * COPY the changes into `target` (its column list given), a row per change: with `withOrd`,
 * `ord, run_id, op, ...` and every change (the staging table); without, `run_id, op, ...` and the
 * deletes left out (the current table of a first load). Returns the changes read.
 */
async function copyDeltas(client: pg.Client, target: string, r: StoredResource, deltas: Iterable<Delta>, perRun: Map<number, number>, withOrd: boolean): Promise<number> {
  const fields = typedFields(r);
  const convert = warehouseColumns(r).map((c) => c.text);
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

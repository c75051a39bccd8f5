/**
 * The Postgres warehouse sink. One delivery is one transaction:
 *
 * 1. take the schema's advisory lock (two loaders into one warehouse take turns), create the
 *    tables if missing ({@link schemaDdl}), check the warehouse is fed from this snapshot;
 * 2. the runs to load: every finished snapshot run up to the delivery's that the warehouse's own
 *    ledger (`_loads`) lacks, ascending. A run already there is never applied again, so loading
 *    the same run twice changes nothing; a gap (a warehouse restored from an old backup) is filled;
 * 3. per resource, COPY the runs' changes into a temporary staging table and apply them set-wise:
 *    close the open history version of every changed id at its first change, add a version per
 *    insert or update (open until the id's next change), then replace the current rows;
 * 4. record the runs in `_loads` and COMMIT. A process killed anywhere before the commit leaves
 *    the warehouse as it was (PostgreSQL rolls the transaction back): at the previous load.
 */
import type pg from "pg";
import { Readable } from "node:stream";
import { pipeline } from "node:stream/promises";
import { from as copyFrom } from "pg-copy-streams";
import type { StoredResource } from "../../store/resources.js";
import type { Delta } from "../run-deltas.js";
import type { DeliveryPlan, DeltaReader, Sink, SinkSession } from "../sink.js";
import { asDate, asDecimal, asText, typedFields, valueAt } from "../typed-fields.js";
import { connectWarehouse, parseWarehouseUrl, type WarehouseTarget } from "./connection.js";
import { copyField, copyJson } from "./copy-text.js";
import { q, schemaDdl, warehouseColumns } from "./warehouse-schema.js";

/** What a load did. */
export interface WarehouseLoad {
  readonly target: string;
  /** The runs this load applied (ascending); empty when the warehouse had them all. */
  readonly loadedRuns: readonly number[];
  /** Changes applied, per resource. */
  readonly changes: Readonly<Partial<Record<StoredResource, number>>>;
}

const OP_ORDER = { insert: 0, update: 1, delete: 2 } as const;

/**
 * @example await deliverToSink(db, postgresSink("postgres://etl@wh:5432/analytics"), runId)
 */
export function postgresSink(url: string): Sink<WarehouseLoad> {
  const target = parseWarehouseUrl(url);
  return {
    output: target.output,
    describe: target.describe,
    async arrived(d) {
      const client = await connectWarehouse(target);
      try {
        const have = await loadedRuns(client, target.schema);
        return d.runs.every((r) => have.has(r));
      } finally {
        await client.end().catch(() => {});
      }
    },
    open: (plan) => openLoad(target, plan),
  };
}

async function loadedRuns(client: pg.Client, schema: string): Promise<Set<number>> {
  const exists = await client.query("SELECT to_regclass($1) IS NOT NULL AS ok", [`${q(schema)}._loads`]);
  if (!exists.rows[0]?.ok) return new Set();
  const r = await client.query(`SELECT run_id FROM ${q(schema)}._loads`);
  return new Set(r.rows.map((x: { run_id: string }) => Number(x.run_id)));
}

async function openLoad(target: WarehouseTarget, plan: DeliveryPlan): Promise<SinkSession<WarehouseLoad>> {
  const client = await connectWarehouse(target);
  const s = q(target.schema);
  let open = false;
  let committed = false;
  try {
    await client.query("BEGIN");
    open = true;
    await client.query("SELECT pg_advisory_xact_lock(hashtext($1))", [`benefits-sync:${target.schema}`]);
    await client.query(schemaDdl(target.schema));
    await checkSnapshot(client, s, target, plan.snapshotId);
    const have = await loadedRuns(client, target.schema);
    const candidates = plan.finishedRuns ?? plan.runs;
    const runs = candidates.filter((r) => !have.has(r) && r <= plan.folderRun);
    const changes: Partial<Record<StoredResource, number>> = {};
    const perRun = new Map<number, number>();
    const session: SinkSession<WarehouseLoad> = {
      async write(resource, deltas) {
        if (runs.length === 0) return;
        changes[resource] = await applyResource(client, s, resource, deltas, runs, perRun);
      },
      async commit() {
        for (const r of runs) {
          await client.query(`INSERT INTO ${s}._loads (run_id, changes) VALUES ($1, $2)`, [r, perRun.get(r) ?? 0]);
        }
        await client.query("COMMIT");
        committed = true;
        return { target: target.describe, loadedRuns: runs, changes };
      },
      async close() {
        if (open && !committed) await client.query("ROLLBACK").catch(() => {});
        await client.end().catch(() => {});
      },
    };
    return session;
  } catch (e) {
    if (open) await client.query("ROLLBACK").catch(() => {});
    await client.end().catch(() => {});
    throw e;
  }
}

async function checkSnapshot(client: pg.Client, s: string, target: WarehouseTarget, id: string | undefined): Promise<void> {
  if (id === undefined) {
    throw Object.assign(new Error("this snapshot has no identity yet (it was made by an older benefits-sync): run `benefits-sync sync` once, then load it"), {
      code: "WAREHOUSE_SNAPSHOT",
    });
  }
  const r = await client.query(`SELECT value FROM ${s}._meta WHERE key = 'snapshot_id'`);
  const there = r.rows[0]?.value as string | undefined;
  if (there === undefined) {
    await client.query(`INSERT INTO ${s}._meta (key, value) VALUES ('snapshot_id', $1)`, [id]);
  } else if (there !== id) {
    throw Object.assign(
      new Error(
        `the warehouse ${target.describe} is fed from another snapshot (${there}, this one is ${id}); run ids of two snapshots do not mix. ` +
          "Load this snapshot into another schema (?schema=NAME in the URL), or drop that schema first",
      ),
      { code: "WAREHOUSE_SNAPSHOT" },
    );
  }
}

/** COPY one resource's changes of `runs` into staging, then apply them; the number of changes. */
async function applyResource(
  client: pg.Client,
  s: string,
  r: StoredResource,
  deltas: DeltaReader,
  runs: readonly number[],
  perRun: Map<number, number>,
): Promise<number> {
  const cols = warehouseColumns(r);
  const names = cols.map((c) => c.name);
  const stage = q(`_stage_${r}`);
  await client.query(
    `CREATE TEMP TABLE ${stage} (ord smallint NOT NULL, op text NOT NULL, run_id bigint NOT NULL, id text NOT NULL, changed_fields jsonb, ` +
      `${cols.map((c) => `${c.name} ${c.type}`).join(", ")}, data jsonb NOT NULL) ON COMMIT DROP`,
  );
  let count = 0;
  const fields = typedFields(r);
  const convert = fields.map((f) => (f.type === "date" ? asDate : f.type === "decimal" ? asDecimal : asText));
  function* chunks(): Generator<string> {
    let buf: string[] = [];
    let size = 0;
    for (const d of deltas(runs) as Iterable<Delta>) {
      count++;
      perRun.set(d.runId, (perRun.get(d.runId) ?? 0) + 1);
      let line = `${OP_ORDER[d.op]}\t${d.op}\t${d.runId}\t${copyField(d.id)}\t${copyJson(d.changedFields)}`;
      for (let i = 0; i < fields.length; i++) line += `\t${copyField(convert[i]!(valueAt(d.data, fields[i]!.path)))}`;
      line += `\t${copyJson(d.data)}\n`;
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
  await pipeline(Readable.from(chunks(), { objectMode: false }), client.query(copyFrom(`COPY ${stage} (ord, op, run_id, id, changed_fields, ${names.join(", ")}, data) FROM STDIN`)));
  if (count === 0) return 0;
  const cur = `${s}.${q(r)}`;
  const hist = `${s}.${q(`${r}_history`)}`;
  const list = names.join(", ");
  const empty = async (t: string) => !(await client.query(`SELECT EXISTS (SELECT 1 FROM ${t}) AS any`)).rows[0]?.any;
  if (!(await empty(hist))) {
    await client.query(
      `UPDATE ${hist} h SET valid_to_run = f.run_id FROM (SELECT DISTINCT ON (id) id, run_id FROM ${stage} ORDER BY id, run_id, ord) f ` +
        `WHERE h.id = f.id AND h.valid_to_run IS NULL`,
    );
  }
  await client.query(
    `INSERT INTO ${hist} (id, valid_from_run, valid_to_run, op, changed_fields, ${list}, data) ` +
      `SELECT id, run_id, next_run, op, changed_fields, ${list}, data FROM ` +
      `(SELECT *, lead(run_id) OVER (PARTITION BY id ORDER BY run_id, ord) AS next_run FROM ${stage}) x WHERE op <> 'delete'`,
  );
  if (!(await empty(cur))) await client.query(`DELETE FROM ${cur} c USING (SELECT DISTINCT id FROM ${stage}) d WHERE c.id = d.id`);
  await client.query(
    `INSERT INTO ${cur} (id, ${list}, data, valid_from_run) SELECT id, ${list}, data, run_id FROM ` +
      `(SELECT DISTINCT ON (id) * FROM ${stage} ORDER BY id, run_id DESC, ord DESC) l WHERE op <> 'delete'`,
  );
  await client.query(`DROP TABLE ${stage}`);
  return count;
}

/**
 * The Postgres warehouse sink. One delivery is one transaction:
 *
 * 1. take the schema's advisory lock (two loaders into one warehouse take turns), create the
 *    tables if missing ({@link schemaDdl}), check the warehouse is fed from this snapshot;
 * 2. the runs to load: every finished snapshot run up to the delivery's that the warehouse's own
 *    ledger (`_loads`) lacks, ascending. A run already there is never applied again, so loading
 *    the same run twice changes nothing; a gap (a warehouse restored from an old backup) is filled;
 * 3. per resource, COPY the runs' changes and apply them set-wise (see apply-resource.ts): the
 *    current version of every changed id moves to `<r>_closed`, ended at its first change, and
 *    its last change becomes current; a first load copies straight into the current table;
 * 4. record the runs in `_loads` (and in `runs`, `run_counts`: when and how each ran) and COMMIT. A process killed anywhere before the commit leaves
 *    the warehouse as it was (PostgreSQL rolls the transaction back): at the previous load.
 */
import type pg from "pg";
import type { StoredResource } from "../../store/schema/resources.js";
import type { DeliveryPlan, Sink, SinkSession } from "../sink.js";
import { connectWarehouse, parseWarehouseUrl, type WarehouseTarget } from "./connection.js";
import { applyResource } from "./apply-resource.js";
import { WAREHOUSE_LAYOUT, checkLayout, q, schemaDdl } from "./warehouse-schema.js";
import { writeRuns } from "./warehouse-runs.js";

/** What a load did. */
export interface WarehouseLoad {
  readonly target: string;
  /** The runs this load applied (ascending); empty when the warehouse had them all. */
  readonly loadedRuns: readonly number[];
  /** Changes applied, per resource. */
  readonly changes: Readonly<Partial<Record<StoredResource, number>>>;
}

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
    await checkLayout(client, target.schema);
    await client.query(schemaDdl(target.schema));
    await client.query(`INSERT INTO ${s}._meta (key, value) VALUES ('layout', $1) ON CONFLICT (key) DO NOTHING`, [WAREHOUSE_LAYOUT]);
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
        if (runs.length) await writeRuns(client, s, plan.runRecords?.(runs) ?? []);
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


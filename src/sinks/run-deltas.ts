import type { Database } from "better-sqlite3";
import { StoredResources, type StoredResource } from "../store/resources.js";
import { withoutPlainSsn } from "./plain-ssn.js";

export const DeltaOps = ["insert", "update", "delete"] as const;
export type DeltaOp = (typeof DeltaOps)[number];

export interface Delta {
  readonly op: DeltaOp;
  readonly runId: number;
  readonly id: string;
  /**
   * The record as stored (the new version for inserts and updates, the last known one for
   * deletes), less any plain SSN field a `--pii keep` snapshot holds: no sink ever sees one.
   */
  readonly data: Record<string, unknown>;
  readonly changedFields: readonly string[] | null;
}

/**
 * The changes that runs `runIds` recorded for one resource, in a stable order: by run, then op
 * (insert, update, delete), then id. Applied in that order, the rows replay the history (a record
 * deleted in one run and back in a later one ends up present), and the same runs always give the
 * same sequence, so the same delivery or export gives the same bytes.
 *
 * @example for (const d of runDeltas(db, "members", [7])) console.log(d.op, d.id);
 */
export function* runDeltas(db: Database, resource: StoredResource, runIds: readonly number[]): Generator<Delta> {
  if (!(StoredResources as readonly string[]).includes(resource)) throw new Error(`unknown resource ${resource}`);
  if (runIds.length === 0) return;
  // One JSON parameter, not one per run: a first delivery may carry thousands of runs.
  const runs = JSON.stringify(runIds);
  const rows = db
    .prepare(
      `SELECT op, run_id, id, data, changed_fields FROM (
         SELECT op, valid_from_run AS run_id, id, data, changed_fields FROM _${resource}_v
           WHERE valid_from_run IN (SELECT value FROM json_each(?))
         UNION ALL
         SELECT 'delete', valid_to_run, id, data, NULL FROM _${resource}_v
           WHERE valid_to_run IN (SELECT value FROM json_each(?)) AND ended_by = 'delete'
       ) ORDER BY run_id, CASE op WHEN 'insert' THEN 0 WHEN 'update' THEN 1 ELSE 2 END, id`,
    )
    .iterate(runs, runs) as IterableIterator<{ op: DeltaOp; run_id: number; id: string; data: string; changed_fields: string | null }>;
  for (const r of rows) {
    yield {
      op: r.op,
      runId: r.run_id,
      id: r.id,
      data: withoutPlainSsn(JSON.parse(r.data) as Record<string, unknown>),
      changedFields: r.changed_fields === null ? null : (JSON.parse(r.changed_fields) as string[]),
    };
  }
}

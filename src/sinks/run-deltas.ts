import type { Database } from "better-sqlite3";
import { StoredResources, type StoredResource } from "../store/resources.js";

export const DeltaOps = ["insert", "update", "delete"] as const;
export type DeltaOp = (typeof DeltaOps)[number];

export interface Delta {
  readonly op: DeltaOp;
  readonly runId: number;
  readonly id: string;
  /** The record as stored: the new version for inserts and updates, the last known one for deletes. */
  readonly data: Record<string, unknown>;
  readonly changedFields: readonly string[] | null;
}

/**
 * The runs whose changes make up run N's deltas: N and the failed runs it resumed (their walk was
 * finished by N, so their changes belong to the same delivery).
 */
export function deliveryRuns(db: Database, runId: number): number[] {
  const out: number[] = [];
  let id: number | null = runId;
  while (id !== null && !out.includes(id)) {
    out.push(id);
    id = (db.prepare("SELECT resumed_from FROM _runs WHERE run_id = ?").pluck().get(id) as number | null | undefined) ?? null;
  }
  return out;
}

/**
 * A run's deltas for one resource, in a stable order (op, then id), so that exporting the same
 * run twice gives the same bytes.
 */
export function* runDeltas(db: Database, resource: StoredResource, runIds: readonly number[]): Generator<Delta> {
  if (!(StoredResources as readonly string[]).includes(resource)) throw new Error(`unknown resource ${resource}`);
  const marks = runIds.map(() => "?").join(",");
  const rows = db
    .prepare(
      `SELECT op, run_id, id, data, changed_fields FROM (
         SELECT op, valid_from_run AS run_id, id, data, changed_fields FROM _${resource}_v WHERE valid_from_run IN (${marks})
         UNION ALL
         SELECT 'delete', valid_to_run, id, data, NULL FROM _${resource}_v
           WHERE valid_to_run IN (${marks}) AND ended_by = 'delete'
       ) ORDER BY CASE op WHEN 'insert' THEN 0 WHEN 'update' THEN 1 ELSE 2 END, id, run_id`,
    )
    .iterate(...runIds, ...runIds) as IterableIterator<{ op: DeltaOp; run_id: number; id: string; data: string; changed_fields: string | null }>;
  for (const r of rows) {
    yield {
      op: r.op,
      runId: r.run_id,
      id: r.id,
      data: JSON.parse(r.data) as Record<string, unknown>,
      changedFields: r.changed_fields === null ? null : (JSON.parse(r.changed_fields) as string[]),
    };
  }
}

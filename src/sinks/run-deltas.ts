import type { Database } from "better-sqlite3";
import { StoredResources, ViewColumns, columnName, type StoredResource } from "../store/resources.js";
import { jsonHasSsnKey } from "../pii/ssn-key.js";
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
  /**
   * `data` as JSON text, when it is exactly the stored text (nothing was taken out of it): a sink
   * that writes JSON may use it instead of serializing `data` again.
   */
  readonly text?: string;
  readonly changedFields: readonly string[] | null;
  /** The documented scalar fields as the snapshot's typed columns hold them, in view order (`ViewColumns`). */
  readonly typed?: readonly unknown[];
}

/**
 * The changes that runs `runIds` recorded for one resource, in a stable order: by run, then op
 * (inserts, updates, deletes), then the order the snapshot recorded them. Applied in that order,
 * the rows replay the history (a record deleted in one run and back in a later one ends up
 * present), and the same runs always give the same sequence, so the same delivery or export gives
 * the same bytes. The order is the version index's own: nothing is sorted, so the first
 * delivery of a million records streams without a sort of every record's text.
 *
 * With `typed`, each change also carries the snapshot's typed columns (`Delta.typed`).
 *
 * @example for (const d of runDeltas(db, "members", [7])) console.log(d.op, d.id);
 */
export function* runDeltas(db: Database, resource: StoredResource, runIds: readonly number[], opts: { typed?: boolean } = {}): Generator<Delta> {
  if (!(StoredResources as readonly string[]).includes(resource)) throw new Error(`unknown resource ${resource}`);
  const typed = opts.typed ? typedColumnsSql(resource) : "";
  // `op` is 'insert' or 'update' (in that order): with the run, the index `_<r>_v_from`, whose
  // entries end in the version id, gives this order as it is read.
  const changed = db
    .prepare(`SELECT op, valid_from_run, id, data, changed_fields${typed} FROM _${resource}_v WHERE valid_from_run = ? ORDER BY op, vid`)
    .raw();
  const deleted = db
    .prepare(`SELECT 'delete', valid_to_run, id, data, NULL${typed} FROM _${resource}_v WHERE valid_to_run = ? AND ended_by = 'delete' ORDER BY vid`)
    .raw();
  for (const run of [...new Set(runIds)].sort((a, b) => a - b)) {
    for (const r of changed.iterate(run) as IterableIterator<unknown[]>) yield new StoredDelta(r);
    for (const r of deleted.iterate(run) as IterableIterator<unknown[]>) yield new StoredDelta(r);
  }
}

/** The typed columns of the version table, in view order, as extra select items. */
function typedColumnsSql(resource: StoredResource): string {
  return ViewColumns[resource].map((p) => `, "${columnName(p)}"`).join("");
}

/**
 * A change as read: `data` is parsed (and any plain SSN taken out) only when first asked for, so
 * a sink that writes the stored text and the typed columns never parses it.
 */
class StoredDelta implements Delta {
  readonly op: DeltaOp;
  readonly runId: number;
  readonly id: string;
  readonly changedFields: readonly string[] | null;
  readonly text?: string;
  /** The documented scalar fields as the snapshot's typed columns hold them (view order). */
  readonly typed?: readonly unknown[];
  private readonly stored: string;
  private parsed: Record<string, unknown> | undefined;
  constructor(r: unknown[]) {
    this.op = r[0] as DeltaOp;
    this.runId = r[1] as number;
    this.id = r[2] as string;
    this.stored = r[3] as string;
    this.changedFields = r[4] === null ? null : (JSON.parse(r[4] as string) as string[]);
    if (r.length > 5) this.typed = r.slice(5);
    // Only a text with an SSN key can hold one: the others are served as stored.
    if (!jsonHasSsnKey(this.stored)) this.text = this.stored;
  }

  get data(): Record<string, unknown> {
    if (this.parsed === undefined) {
      const v = JSON.parse(this.stored) as Record<string, unknown>;
      this.parsed = this.text === undefined ? withoutPlainSsn(v) : v;
    }
    return this.parsed;
  }
}

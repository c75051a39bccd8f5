import type { Database } from "better-sqlite3";
import { StoredResources, ViewColumns, columnName, type StoredResource } from "../store/schema/resources.js";
import { jsonMayHoldSsn } from "../pii/ssn-key.js";
import { plainFreeValue, withoutPlainSsn } from "./plain-ssn.js";

export const DeltaOps = ["insert", "update", "delete"] as const;
export type DeltaOp = (typeof DeltaOps)[number];

export interface Delta {
  readonly op: DeltaOp;
  readonly runId: number;
  readonly id: string;
  /**
   * The record as stored (the new version for inserts and updates, the last known one for
   * deletes), less any plain SSN a `--pii keep` snapshot holds (`withoutPlainSsn`): no sink ever
   * sees one.
   */
  readonly data: Record<string, unknown>;
  /**
   * `data` as JSON text, when it is exactly the stored text (nothing was taken out of it): a sink
   * that writes JSON may use it instead of serializing `data` again.
   */
  readonly text?: string;
  readonly changedFields: readonly string[] | null;
  /**
   * The documented scalar fields as the snapshot's typed columns hold them, in view order
   * (`ViewColumns`); under `--pii keep`, an SSN field null and a shape in a string `[ssn]`.
   */
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
  // The JSON by the version's key, from the table beside (analyst-schema.ts).
  const data = `(SELECT d.data FROM _${resource}_d d WHERE d.vid = _${resource}_v.vid)`;
  const changed = db
    .prepare(`SELECT op, valid_from_run, id, ${data}, changed_fields${typed} FROM _${resource}_v WHERE valid_from_run = ? ORDER BY op, vid`)
    .raw();
  const deleted = db
    .prepare(`SELECT 'delete', valid_to_run, id, ${data}, NULL${typed} FROM _${resource}_v WHERE valid_to_run = ? AND ended_by = 'delete' ORDER BY vid`)
    .raw();
  for (const run of [...new Set(runIds)].sort((a, b) => a - b)) {
    for (const r of changed.iterate(run) as IterableIterator<unknown[]>) yield new StoredDelta(r, resource);
    for (const r of deleted.iterate(run) as IterableIterator<unknown[]>) yield new StoredDelta(r, resource);
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
  constructor(r: unknown[], resource: StoredResource) {
    this.op = r[0] as DeltaOp;
    this.runId = r[1] as number;
    this.id = r[2] as string;
    this.stored = r[3] as string;
    this.changedFields = r[4] === null ? null : (JSON.parse(r[4] as string) as string[]);
    // Only a text the rule says may hold a plain SSN needs a look (a `--pii keep` snapshot's): the
    // others are served as stored, and so are their typed columns, read from that text.
    const plain = jsonMayHoldSsn(this.stored);
    if (!plain) this.text = this.stored;
    if (r.length > 5) {
      const paths = ViewColumns[resource];
      this.typed = plain ? r.slice(5).map((v, i) => plainFreeValue(paths[i]!, v)) : r.slice(5);
    }
  }

  get data(): Record<string, unknown> {
    if (this.parsed === undefined) {
      const v = JSON.parse(this.stored) as Record<string, unknown>;
      this.parsed = this.text === undefined ? withoutPlainSsn(v) : v;
    }
    return this.parsed;
  }
}

/**
 * The layout of a run folder's rows, defined once for every format and for the data dictionary
 * (docs/outputs.md): the columns that lead every row, the lists that get a file of their own and
 * how their items are numbered, and the order `changed_fields` names fields in.
 */
import { ViewColumns, type StoredResource } from "../../store/schema/resources.js";

/** Every resource file's first columns, in this order, in CSV and Parquet (JSONL: the keys before `data`). */
export const LeadColumns = ["op", "run_id", "id", "changed_fields"] as const;

/** A nested list with a file of its own: one row per item, with its parent's id and its number. */
export interface ChildList {
  /** The list's field in the parent record. */
  readonly field: string;
  /** The file's name without its extension. */
  readonly file: string;
  readonly parentColumn: string;
  /** The item's number in its list, counted from {@link LINE_BASE} as the snapshot's views count it. */
  readonly numberColumn: string;
  /** The item's documented fields, in order (the rest follow, sorted, in CSV; they are in `data` in Parquet). */
  readonly fields: readonly string[];
}

/** Where a list's items are counted from: 1, as in the snapshot's `claim_lines.line_no`. */
export const LINE_BASE = 1;

export const ChildLists: Readonly<Partial<Record<StoredResource, ChildList>>> = {
  claims: { field: "lines", file: "claim_lines", parentColumn: "claim_id", numberColumn: "line_no", fields: ["code", "amount"] },
};

/** A child file's first columns. */
export const childLeadColumns = (c: ChildList): string[] => ["op", "run_id", c.parentColumn, c.numberColumn];

/**
 * The changed field paths of an update in column order: the documented fields in their order,
 * then the others sorted (as a CSV file orders its columns); `rename` gives a format's column
 * names (Parquet's `address_city`). Null for an insert or a delete.
 *
 * @example orderChangedFields("members", ["address.city", "lastName"]) // ["lastName", "address.city"]
 */
export function orderChangedFields(resource: StoredResource, paths: readonly string[] | null, rename: (p: string) => string = (p) => p): string[] | null {
  if (paths === null) return null;
  const documented = ViewColumns[resource];
  const rank = (p: string): number => {
    const i = documented.indexOf(p);
    return i < 0 ? documented.length : i;
  };
  return [...paths].sort((a, b) => rank(a) - rank(b) || (a < b ? -1 : a > b ? 1 : 0)).map(rename);
}

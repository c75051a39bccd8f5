import { ViewColumns, type StoredResource } from "../../store/schema/resources.js";
import type { Delta } from "../run-deltas.js";
import type { FileFormat } from "../files/folder-sink.js";
import { HashedFile } from "../files/hashed-file.js";
import type { ManifestFile } from "../files/manifest.js";
import { csvRow } from "./csv-row.js";
import { flatten } from "./flatten.js";
import { ChildLists, LeadColumns, LINE_BASE, childLeadColumns, orderChangedFields } from "../files/layout.js";

/**
 * CSV per the contract: one file per stored resource and one per child list (`claim_lines.csv`),
 * always all of them, a header only when nothing changed, so that a loader never takes "no
 * changes" for "missing file". Columns: `op, run_id, id, changed_fields` (an update's changed
 * columns as a JSON array, in column order; empty for an insert or a delete), every documented
 * field (in its documented order), then any other field (sorted), flattened with dots; a child
 * list's columns: `op, run_id, <parent>_id, line_no` (from 1), its documented fields, then any
 * other (sorted). See files/layout.ts.
 *
 * One pass in the usual case: the files are written with the documented columns, and should a
 * record carry a field beyond them, they are written again with the columns a first pass over
 * every change finds. Both ways give the same bytes.
 */
export const csvFormat: FileFormat = {
  name: "csv",
  writeResource(dir, resource, deltas) {
    const child = ChildLists[resource];
    const skip = new Set(child ? [child.field] : []);
    const optimistic = writeFiles(dir, resource, deltas(), skip, { columns: [...ViewColumns[resource]], childColumns: [...(child?.fields ?? [])] }, true);
    if (optimistic) return optimistic;
    return writeFiles(dir, resource, deltas(), skip, discoverColumns(resource, deltas(), skip, child?.field), false)!;
  },
};

interface Columns {
  readonly columns: readonly string[];
  readonly childColumns: readonly string[];
}

/** Write the resource's files with these columns; with `strict`, undefined (and nothing left) at the first field outside them. */
function writeFiles(dir: string, resource: StoredResource, deltas: Iterable<Delta>, skip: ReadonlySet<string>, cols: Columns, strict: boolean): ManifestFile[] | undefined {
  const child = ChildLists[resource];
  const known = new Set(["id", ...cols.columns]);
  const childKnown = new Set(cols.childColumns);
  const main = new HashedFile(dir, `${resource}.csv`);
  const sub = child ? new HashedFile(dir, `${child.file}.csv`) : undefined;
  let done = false;
  try {
    main.text(csvRow([...LeadColumns, ...cols.columns]));
    if (child && sub) sub.text(csvRow([...childLeadColumns(child), ...cols.childColumns]));
    for (const d of deltas) {
      const fields = flatten(d.data, skip);
      if (strict) for (const k in fields) if (!known.has(k)) return undefined;
      main.row(csvMainRow(resource, d, fields, cols.columns));
      if (child && sub) {
        const items = childItems(d, child.field);
        for (let i = 0; i < items.length; i++) {
          const f = flatten(items[i]!);
          if (strict) for (const k in f) if (!childKnown.has(k)) return undefined;
          sub.row(csvChildRow(d, i, f, cols.childColumns));
        }
      }
    }
    const files = [main.close()];
    if (sub) files.push(sub.close());
    done = true;
    return files;
  } finally {
    main.abandon();
    sub?.abandon();
    if (!done) {
      main.remove();
      sub?.remove();
    }
  }
}

/** A resource file's row: the lead columns, then `columns` from the change's flattened record. */
export function csvMainRow(resource: StoredResource, d: Delta, fields: Readonly<Record<string, string>>, columns: readonly string[]): string {
  const changed = orderChangedFields(resource, d.changedFields);
  return csvRow([d.op, String(d.runId), d.id, changed ? JSON.stringify(changed) : "", ...columns.map((c) => fields[c] ?? "")]);
}

/** A child file's row for item `i` (counted from 0 in the list) of the change's list, `f` the flattened item. */
export function csvChildRow(d: Delta, i: number, f: Readonly<Record<string, string>>, childColumns: readonly string[]): string {
  return csvRow([d.op, String(d.runId), d.id, String(i + LINE_BASE), ...childColumns.map((c) => f[c] ?? "")]);
}

/** The field columns of a resource's files (after the lead columns): the documented ones in order, then the others sorted. */
export function discoverColumns(
  resource: StoredResource,
  deltas: Iterable<Delta>,
  skip: ReadonlySet<string>,
  childField?: string,
): { columns: string[]; childColumns: string[] } {
  const documented = ViewColumns[resource];
  const childDocumented = ChildLists[resource]?.fields ?? [];
  const others = new Set<string>();
  const childKeys = new Set<string>();
  for (const d of deltas) {
    for (const k of Object.keys(flatten(d.data, skip))) others.add(k);
    if (childField) for (const item of childItems(d, childField)) for (const k of Object.keys(flatten(item))) childKeys.add(k);
  }
  others.delete("id");
  for (const k of documented) others.delete(k);
  for (const k of childDocumented) childKeys.delete(k);
  return { columns: [...documented, ...[...others].sort()], childColumns: [...childDocumented, ...[...childKeys].sort()] };
}

export function childItems(d: Delta, field: string): Record<string, unknown>[] {
  const items = d.data[field];
  if (!Array.isArray(items)) return [];
  return items.map((item: unknown) => (item && typeof item === "object" && !Array.isArray(item) ? (item as Record<string, unknown>) : { value: item }));
}

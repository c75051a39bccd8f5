import { ViewColumns, type StoredResource } from "../../store/resources.js";
import type { Delta } from "../run-deltas.js";
import type { FileFormat } from "../files/folder-sink.js";
import { HashedFile } from "../files/hashed-file.js";
import type { ManifestFile } from "../files/manifest.js";
import { csvRow } from "./csv-row.js";
import { childLists, flatten } from "./flatten.js";

/**
 * CSV per the contract: one file per stored resource and one per child list (`claim_lines.csv`),
 * always all of them, a header only when nothing changed, so that a loader never takes "no
 * changes" for "missing file". Columns: `op, run_id, id`, every documented field (in its
 * documented order), then any other field (sorted), flattened with dots; a child list's columns
 * are its items' fields, sorted.
 *
 * One pass in the usual case: the files are written with the documented columns (and the first
 * child item's fields), and should a record carry a field beyond them, they are written again with
 * the columns a first pass over every change finds. Both ways give the same bytes.
 */
export const csvFormat: FileFormat = {
  name: "csv",
  writeResource(dir, resource, deltas) {
    const child = childLists[resource];
    const skip = new Set(child ? [child.field] : []);
    const optimistic = writeFiles(dir, resource, deltas(), skip, { columns: [...ViewColumns[resource]] }, true);
    if (optimistic) return optimistic;
    return writeFiles(dir, resource, deltas(), skip, discoverColumns(resource, deltas(), skip, child?.field), false)!;
  },
};

interface Columns {
  readonly columns: readonly string[];
  /** Undefined: take the first child item's fields (sorted), and give up on any other. */
  readonly childColumns?: readonly string[];
}

/** Write the resource's files with these columns; with `strict`, undefined (and nothing left) at the first field outside them. */
function writeFiles(dir: string, resource: StoredResource, deltas: Iterable<Delta>, skip: ReadonlySet<string>, cols: Columns, strict: boolean): ManifestFile[] | undefined {
  const child = childLists[resource];
  const known = new Set(["id", ...cols.columns]);
  let childColumns = cols.childColumns;
  let childKnown = childColumns && new Set(childColumns);
  const main = new HashedFile(dir, `${resource}.csv`);
  const sub = child ? new HashedFile(dir, `${child.file}.csv`) : undefined;
  let done = false;
  try {
    main.text(csvRow(["op", "run_id", "id", ...cols.columns]));
    if (childColumns && sub) sub.text(csvRow(["op", "run_id", child!.parentColumn, "index", ...childColumns]));
    for (const d of deltas) {
      const fields = flatten(d.data, skip);
      if (strict) for (const k in fields) if (!known.has(k)) return undefined;
      main.row(csvRow([d.op, String(d.runId), d.id, ...cols.columns.map((c) => fields[c] ?? "")]));
      if (child && sub) {
        const items = childItems(d, child.field);
        for (let i = 0; i < items.length; i++) {
          const f = flatten(items[i]!);
          if (!childColumns) {
            childColumns = Object.keys(f).sort();
            childKnown = new Set(childColumns);
            sub.text(csvRow(["op", "run_id", child.parentColumn, "index", ...childColumns]));
          }
          if (strict) for (const k in f) if (!childKnown!.has(k)) return undefined;
          sub.row(csvRow([d.op, String(d.runId), d.id, String(i), ...childColumns.map((c) => f[c] ?? "")]));
        }
      }
    }
    if (child && sub && !childColumns) sub.text(csvRow(["op", "run_id", child.parentColumn, "index"]));
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

/** The columns of a resource's file: the documented ones in order, then the others sorted. */
export function discoverColumns(
  resource: StoredResource,
  deltas: Iterable<Delta>,
  skip: ReadonlySet<string>,
  childField?: string,
): { columns: string[]; childColumns: string[] } {
  const documented = ViewColumns[resource];
  const others = new Set<string>();
  const childKeys = new Set<string>();
  for (const d of deltas) {
    for (const k of Object.keys(flatten(d.data, skip))) others.add(k);
    if (childField) for (const item of childItems(d, childField)) for (const k of Object.keys(flatten(item))) childKeys.add(k);
  }
  others.delete("id");
  for (const k of documented) others.delete(k);
  return { columns: [...documented, ...[...others].sort()], childColumns: [...childKeys].sort() };
}

export function childItems(d: Delta, field: string): Record<string, unknown>[] {
  const items = d.data[field];
  if (!Array.isArray(items)) return [];
  return items.map((item: unknown) => (item && typeof item === "object" && !Array.isArray(item) ? (item as Record<string, unknown>) : { value: item }));
}

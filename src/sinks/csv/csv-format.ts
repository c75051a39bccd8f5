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
 * documented order), then any other field (sorted), flattened with dots. Rows are streamed (two
 * passes over the changes: the columns, then the rows).
 */
export const csvFormat: FileFormat = {
  name: "csv",
  writeResource(dir, resource, deltas) {
    const child = childLists[resource];
    const skip = new Set(child ? [child.field] : []);
    const { columns, childColumns } = discoverColumns(resource, deltas(), skip, child?.field);
    const main = new HashedFile(dir, `${resource}.csv`);
    const sub = child ? new HashedFile(dir, `${child.file}.csv`) : undefined;
    const files: ManifestFile[] = [];
    try {
      main.text(csvRow(["op", "run_id", "id", ...columns]));
      if (child && sub) sub.text(csvRow(["op", "run_id", child.parentColumn, "index", ...childColumns]));
      for (const d of deltas()) {
        const fields = flatten(d.data, skip);
        main.row(csvRow([d.op, String(d.runId), d.id, ...columns.map((c) => fields[c] ?? "")]));
        if (child && sub) {
          childItems(d, child.field).forEach((item, i) => {
            const f = flatten(item);
            sub.row(csvRow([d.op, String(d.runId), d.id, String(i), ...childColumns.map((c) => f[c] ?? "")]));
          });
        }
      }
      files.push(main.close());
      if (sub) files.push(sub.close());
      return files;
    } finally {
      main.abandon();
      sub?.abandon();
    }
  },
};

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

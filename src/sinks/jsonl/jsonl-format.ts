import type { StoredResource } from "../../store/schema/resources.js";
import type { FileFormat } from "../files/folder-sink.js";
import type { Delta } from "../run-deltas.js";
import { HashedFile } from "../files/hashed-file.js";
import { orderChangedFields } from "../files/layout.js";

/**
 * JSON Lines: one file per stored resource (`members.jsonl`), always all of them (empty when
 * nothing changed), one line per change, LF-terminated, UTF-8:
 * `{"op":"update","run_id":7,"id":"m1","changed_fields":["lastName"],"data":{...}}`. `data` is the
 * whole record as stored (deleted rows: the last known version), nested lists included, decimal
 * amounts as their strings; `changed_fields` is null except for updates (the changed field paths in
 * the CSV's column order, files/layout.ts). Keys in a fixed order
 * and the record as stored, so the same runs give the same bytes.
 */
export const jsonlFormat: FileFormat = {
  name: "jsonl",
  writeResource(dir, resource, deltas) {
    const file = new HashedFile(dir, `${resource}.jsonl`);
    try {
      for (const d of deltas()) file.row(jsonlLine(resource, d));
      return [file.close()];
    } finally {
      file.abandon();
    }
  },
};

/** One change's line, LF-terminated. */
export function jsonlLine(resource: StoredResource, d: Delta): string {
  // The stored text as it is when nothing had to be taken out of it (it is JSON.stringify's own output).
  const head = JSON.stringify({ op: d.op, run_id: d.runId, id: d.id, changed_fields: orderChangedFields(resource, d.changedFields) });
  return `${head.slice(0, -1)},"data":${d.text ?? JSON.stringify(d.data)}}\n`;
}

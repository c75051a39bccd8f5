/**
 * Rewriting stored versions in place (no new version, no change recorded: the record is the
 * same), as the SSN rule's scrub and `pii rekey` do: each version's data and hash, in batches,
 * since a read cannot stay open across writes on one connection. Only under the erasure rule
 * (erasure.ts): the text replaced must not stay in the file.
 */
import type { Database } from "better-sqlite3";
import { isErasing } from "../file/erasure.js";
import { versionHash } from "../walk/prepare-page.js";

const BATCH = 1000;

/**
 * For each version of `resource` matching the SQL condition `where`, `rewrite` gives its new data
 * (canonical JSON) or undefined to leave it; a new one is written with its hash, then `written`
 * hears its vid. Returns how many were rewritten.
 */
export function rewriteVersionsInPlace(db: Database, resource: string, where: string, rewrite: (data: string) => string | undefined, written?: (vid: number, n: number) => void): number {
  if (!isErasing(db)) throw new Error("rewriteVersionsInPlace: versions are rewritten only under the erasure rule (startErasure, erasure.ts)");
  // The JSON of every version, its row's or not: \`where\` reads \`data\` (or nothing).
  const read = db.prepare(`SELECT vid, data FROM _${resource}_d WHERE vid > ? AND (${where}) ORDER BY vid LIMIT ${BATCH}`).raw();
  const write = db.prepare(`UPDATE _${resource}_d SET data = ?, hash = ? WHERE vid = ?`);
  let n = 0;
  for (let after = 0; ; ) {
    const rows = read.all(after) as [number, string][];
    if (rows.length === 0) return n;
    for (const [vid, data] of rows) {
      after = vid;
      const next = rewrite(data);
      if (next === undefined || next === data) continue;
      write.run(next, versionHash(next), vid);
      written?.(vid, ++n);
    }
  }
}

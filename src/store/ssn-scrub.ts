/**
 * A snapshot written under an older SSN rule may hold plain SSNs under keys that rule did not know
 * (`dependentSsn`, `spouse.socialSecurityNumber`), in every version, and a server that sends the
 * same text again changes nothing, so nothing would ever re-encode them. The first run under the
 * current rule rewrites them in place: versions (data and hash; no new version, no change
 * recorded: the record is the same), quarantined excerpts and run errors. Done once per rule
 * version (kept in `_meta`), with SQLite's secure_delete on and the WAL checkpointed after, so
 * the old bytes do not linger in free pages or the log.
 */
import type { Database } from "better-sqlite3";
import { jsonMayHoldSsn, maskSsnText } from "../pii/ssn-key.js";
import { canonicalJson, type SsnMasker } from "./canonical.js";
import { versionHash } from "./prepare-page.js";
import { StoredResources } from "./resources.js";

/** Bump with every change of the rule in `pii/ssn-key.ts` that recognises more keys. 1: `ssn` only. */
export const SSN_RULE_VERSION = "2";
const META_KEY = "ssn_rule";
const BATCH = 1000;

/**
 * Bring the stored text up to the current SSN rule, once. `masker` undefined (`--pii keep`): the
 * plain values are wanted, so nothing is rewritten, but the snapshot counts as up to date (a later
 * token run does not mask what a keep run kept on purpose). Returns how many rows it rewrote.
 */
export function scrubStoredSsns(db: Database, masker: SsnMasker | undefined): number {
  const done = db.prepare("SELECT value FROM _meta WHERE key = ?").pluck().get(META_KEY);
  if (done === SSN_RULE_VERSION) return 0;
  let rewritten = 0;
  const secure = db.pragma("secure_delete", { simple: true }) as number;
  db.pragma("secure_delete = ON");
  try {
    db.transaction(() => {
      if (masker) {
        for (const r of StoredResources) rewritten += rewriteVersions(db, r, masker);
        rewritten += rewriteTexts(db, "_quarantine", "rowid", "excerpt");
        rewritten += rewriteTexts(db, "_runs", "run_id", "error");
      }
      db.prepare("INSERT INTO _meta (key, value) VALUES (?, ?) ON CONFLICT (key) DO UPDATE SET value = excluded.value").run(META_KEY, SSN_RULE_VERSION);
    })();
  } finally {
    db.pragma(`secure_delete = ${secure}`);
  }
  if (rewritten > 0) db.pragma("wal_checkpoint(TRUNCATE)");
  return rewritten;
}

/** Rewrite, in batches (a read cannot stay open across writes), each version that has an SSN key. */
function rewriteVersions(db: Database, resource: string, masker: SsnMasker): number {
  const read = db.prepare(`SELECT vid, data FROM _${resource}_v WHERE vid > ? AND (data LIKE '%ss%' OR data LIKE '%social%') ORDER BY vid LIMIT ${BATCH}`).raw();
  const write = db.prepare(`UPDATE _${resource}_v SET data = ?, hash = ? WHERE vid = ?`);
  let n = 0;
  for (let after = 0; ; ) {
    const rows = read.all(after) as [number, string][];
    if (rows.length === 0) return n;
    for (const [vid, data] of rows) {
      after = vid;
      if (!jsonMayHoldSsn(data)) continue;
      const masked = canonicalJson(JSON.parse(data), { maskSsn: masker });
      if (masked === data) continue;
      write.run(masked, versionHash(masked), vid);
      n++;
    }
  }
}

/** Mask the free texts of a column as every new one is masked. */
function rewriteTexts(db: Database, table: string, key: string, column: string): number {
  const rows = db.prepare(`SELECT ${key}, ${column} FROM ${table} WHERE ${column} IS NOT NULL`).raw().all() as [number, string][];
  const write = db.prepare(`UPDATE ${table} SET ${column} = ? WHERE ${key} = ?`);
  let n = 0;
  for (const [k, text] of rows) {
    const masked = maskSsnText(text);
    if (masked !== text) {
      write.run(masked, k);
      n++;
    }
  }
  return n;
}

/**
 * A snapshot written under an older SSN rule may hold plain SSNs the rule did not see then (keys
 * such as `taxId` or `SS#`, a typed pair's value, a shape in free text), in every version, and a
 * server that sends the same text again changes nothing, so nothing would ever re-encode them. The
 * first run under the current rule (`SSN_RULE_VERSION`) rewrites them in place: versions (data,
 * hash and the typed columns read from data; no new version, no change recorded: the record is
 * the same), quarantined excerpts and run errors. Done once per rule version (kept in `_meta`),
 * under the erasure rule (erasure.ts), so the old bytes do not linger in free pages or the log.
 */
import type { Database, Statement } from "better-sqlite3";
import { jsonMayHoldSsn, maskSsnText, SSN_RULE_VERSION } from "../../pii/ssn-key.js";
import { canonicalJson, type SsnMasker } from "../walk/canonical.js";
import { startErasure, tryFinish } from "../file/erasure.js";
import { StoredResources, type StoredResource } from "../schema/resources.js";
import { rewriteVersionsInPlace } from "./version-rewrite.js";
import { versionStatements } from "../walk/versions.js";

const META_KEY = "ssn_rule";

/**
 * Bring the stored text up to the current SSN rule, once. `masker` undefined (`--pii keep`): the
 * plain values are wanted, so nothing is rewritten, but the snapshot counts as up to date (a later
 * token run does not mask what a keep run kept on purpose). `ids` names each resource's fields
 * holding its own id and parent key, which the rule leaves alone (`Encoder.ownIdFields`). Returns
 * how many rows it rewrote.
 */
export function scrubStoredSsns(db: Database, masker: SsnMasker | undefined, ids: (r: StoredResource) => readonly string[] = () => ["id"]): number {
  const done = db.prepare("SELECT value FROM _meta WHERE key = ?").pluck().get(META_KEY);
  if (done === SSN_RULE_VERSION) return 0;
  let rewritten = 0;
  const erasure = startErasure(db);
  try {
    // Immediate: it reads before it writes, and SQLite answers SQLITE_BUSY at once (no busy wait)
    // to a reader that wants to write while another connection writes. Checked again under the
    // lock: another run may have scrubbed meanwhile.
    db.transaction(() => {
      if (db.prepare("SELECT value FROM _meta WHERE key = ?").pluck().get(META_KEY) === SSN_RULE_VERSION) return;
      if (masker) {
        const refresh = versionStatements(db);
        for (const r of StoredResources) rewritten += rewriteVersions(db, r, masker, ids(r), refresh.get(r)!.refreshTyped);
        rewritten += rewriteTexts(db, "_quarantine", "rowid", "excerpt");
        rewritten += rewriteTexts(db, "_runs", "run_id", "error");
      }
      db.prepare("INSERT INTO _meta (key, value) VALUES (?, ?) ON CONFLICT (key) DO UPDATE SET value = excluded.value").run(META_KEY, SSN_RULE_VERSION);
    }).immediate();
  } finally {
    tryFinish(erasure);
  }
  return rewritten;
}

/**
 * Rewrite each version the rule says may hold a plain SSN. No SQL `LIKE` can see a shape: every
 * version is read, and looked at in JavaScript (`jsonMayHoldSsn`). The typed columns are read
 * again from the new data, or `address_line1` would keep the plain text.
 */
function rewriteVersions(db: Database, resource: StoredResource, masker: SsnMasker, ids: readonly string[], refreshTyped: Statement): number {
  return rewriteVersionsInPlace(
    db,
    resource,
    "1",
    (data) => (jsonMayHoldSsn(data) ? canonicalJson(JSON.parse(data), { maskSsn: masker, ids }) : undefined),
    (vid) => refreshTyped.run(vid),
  );
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

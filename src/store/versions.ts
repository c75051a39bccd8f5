/**
 * The statements on one resource's append-only version table (`_<resource>_v`): a version row is
 * written once when a record is inserted or changed, and closed (`valid_to_run`, `ended_by`) when
 * it is replaced or deleted.
 */
import type { Database, Statement } from "better-sqlite3";
import { insertVersionSql, refreshTypedSql } from "./analyst-schema.js";
import { StoredResources, type StoredResource } from "./resources.js";

export interface VersionStatements {
  /** The current version of one id. */
  readonly current: Statement;
  /** `id, vid, fp` of the current versions of a JSON array of ids (from the covering index). */
  readonly currentMany: Statement;
  readonly data: Statement;
  readonly setFp: Statement;
  /** `(id, valid_from_run, op, part, changed_fields, fp, hash, data)`; returns the new vid. The typed columns are read from data. */
  readonly insert: Statement;
  /** `(vid)`: read the typed columns again from the version's data (after it was amended). */
  readonly refreshTyped: Statement;
  /** `(valid_to_run, ended_by, vid)` */
  readonly close: Statement;
  /** `vid, id, part, data` of the current children of a JSON array of parents. */
  readonly childrenOf: Statement;
  readonly childrenOfOne: Statement;
  readonly countChildren: Statement;
}

export function versionStatements(db: Database): Map<StoredResource, VersionStatements> {
  const out = new Map<StoredResource, VersionStatements>();
  for (const r of StoredResources) {
    const t = `_${r}_v`;
    out.set(r, {
      current: db.prepare(`SELECT vid FROM ${t} WHERE id = ? AND valid_to_run IS NULL`),
      // Answered from the covering index of current versions: no table row is read.
      currentMany: db.prepare(`SELECT id, vid, fp FROM ${t} WHERE id IN (SELECT value FROM json_each(?)) AND valid_to_run IS NULL`),
      data: db.prepare(`SELECT data FROM ${t} WHERE vid = ?`).pluck(),
      setFp: db.prepare(`UPDATE ${t} SET fp = ? WHERE vid = ?`),
      insert: db.prepare(insertVersionSql(r)),
      refreshTyped: db.prepare(refreshTypedSql(r)),
      close: db.prepare(`UPDATE ${t} SET valid_to_run = ?, ended_by = ? WHERE vid = ?`),
      childrenOf: db.prepare(`SELECT vid, id, part, data FROM ${t} WHERE part IN (SELECT value FROM json_each(?)) AND valid_to_run IS NULL`),
      childrenOfOne: db.prepare(`SELECT vid FROM ${t} WHERE part = ? AND valid_to_run IS NULL`),
      countChildren: db.prepare(`SELECT COUNT(*) FROM ${t} WHERE part IN (SELECT value FROM json_each(?)) AND valid_to_run IS NULL`).pluck(),
    });
  }
  return out;
}

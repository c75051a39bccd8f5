/**
 * The statements on one resource's append-only version table (`_<resource>_v`, its JSON in
 * `_<resource>_d`): a version is written once when a record is inserted or changed, and closed
 * (`valid_to_run`, `ended_by`) when it is replaced or deleted.
 */
import type { Database, Statement } from "better-sqlite3";
import { insertDataSql, insertVersionSql, refreshTypedSql } from "../schema/analyst-schema.js";
import { StoredResources, type StoredResource } from "../schema/resources.js";

export interface VersionStatements {
  /** The current version of one id. */
  readonly current: Statement;
  /** `id, vid, fp` of the current versions of a JSON array of ids (from the covering index). */
  readonly currentMany: Statement;
  readonly data: Statement;
  readonly setFp: Statement;
  /** Write a version (its row, the typed columns read from `data`, then its JSON); returns the new vid. */
  readonly insert: (id: string, runId: number, op: "insert" | "update", part: string | null, changedFields: string | null, fp: number | null, hash: string, data: string) => number;
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
    const row = db.prepare(insertVersionSql(r));
    const json = db.prepare(insertDataSql(r));
    out.set(r, {
      current: db.prepare(`SELECT vid FROM ${t} WHERE id = ? AND valid_to_run IS NULL`),
      // Answered from the covering index of current versions: no table row is read.
      currentMany: db.prepare(`SELECT id, vid, fp FROM ${t} WHERE id IN (SELECT value FROM json_each(?)) AND valid_to_run IS NULL`),
      data: db.prepare(`SELECT data FROM _${r}_d WHERE vid = ?`).pluck(),
      setFp: db.prepare(`UPDATE ${t} SET fp = ? WHERE vid = ?`),
      insert: (id, runId, op, part, changedFields, fp, hash, data) => {
        const vid = Number(row.run(id, runId, op, part, changedFields, fp, data).lastInsertRowid);
        json.run(vid, hash, data);
        return vid;
      },
      refreshTyped: db.prepare(refreshTypedSql(r)),
      close: db.prepare(`UPDATE ${t} SET valid_to_run = ?, ended_by = ? WHERE vid = ?`),
      childrenOf: db.prepare(
        `SELECT v.vid, v.id, v.part, d.data FROM ${t} v JOIN _${r}_d d ON d.vid = v.vid WHERE v.part IN (SELECT value FROM json_each(?)) AND v.valid_to_run IS NULL`,
      ),
      childrenOfOne: db.prepare(`SELECT vid FROM ${t} WHERE part = ? AND valid_to_run IS NULL`),
      countChildren: db.prepare(`SELECT COUNT(*) FROM ${t} WHERE part IN (SELECT value FROM json_each(?)) AND valid_to_run IS NULL`).pluck(),
    });
  }
  return out;
}

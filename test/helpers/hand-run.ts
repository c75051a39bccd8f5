/**
 * A run's state written by a test rather than by a sync: versions stored, ids seen, scopes walked
 * (complete, quarantined, fresh) and their tallies. The delete rules are asked directly on it, so a
 * test names every fact the answer depends on, and the answer is worked out by hand.
 */
import type { Database } from "better-sqlite3";
import { insertDataSql, insertVersionSql } from "../../src/store/schema/analyst-schema.js";
import type { Checkpoints } from "../../src/store/runs/checkpoints.js";
import { cents } from "../../src/store/schema/money-sql.js";
import type { StoredResource } from "../../src/store/schema/resources.js";
import type { ActiveRun } from "../../src/store/runs/run-state.js";
import type { Scope } from "../../src/store/walk/scopes.js";

/** Store one version of a record (current, or ended by a later update) and return its vid. */
export function storeVersion(db: Database, resource: string, id: string, part: string | null, data: Record<string, unknown>, ended = false): number {
  return writeVersionRow(db, resource, { id, part, data: JSON.stringify({ id, ...data }), validTo: ended ? 2 : null, endedBy: ended ? "update" : null });
}

/**
 * Write a version as the store does (its row, the typed columns read from its JSON, then the JSON
 * and hash beside: analyst-schema.ts), with the validity given; returns its vid.
 */
export function writeVersionRow(
  db: Database,
  resource: string,
  v: { id: string; data: string; part?: string | null; validFrom?: number; validTo?: number | null; endedBy?: string | null; op?: string; fp?: number | null; hash?: string; changedFields?: string | null },
): number {
  const r = resource as StoredResource;
  const vid = Number(db.prepare(insertVersionSql(r)).run(v.id, v.validFrom ?? 1, v.op ?? "insert", v.part ?? null, v.changedFields ?? null, v.fp ?? null, v.data).lastInsertRowid);
  db.prepare(insertDataSql(r)).run(vid, v.hash ?? "h", v.data);
  if (v.validTo != null || v.endedBy != null) db.prepare(`UPDATE _${r}_v SET valid_to_run = ?, ended_by = ? WHERE vid = ?`).run(v.validTo ?? null, v.endedBy ?? null, vid);
  return vid;
}

/** Note a child version as no longer listed by its re-read parent (in scope `scope`). */
export function noteChildGone(db: Database, resource: "plans" | "coverages", vid: number, scope = "x"): void {
  db.prepare("INSERT INTO _child_gone (resource, vid, scope) VALUES (?, ?, ?)").run(resource, vid, scope);
}

/** Run 1, walking `scopes`; `fresh` resources had nothing stored; `quarantined` items per scope key. */
export function handRun(scopes: Scope[], opts: { fresh?: string[]; quarantined?: Record<string, number> } = {}): ActiveRun {
  return {
    runId: 1,
    scopes: new Map(scopes.map((s) => [s.key, s])),
    fresh: new Set(opts.fresh ?? []),
    quarantinedByScope: new Map(Object.entries(opts.quarantined ?? {})),
  } as unknown as ActiveRun;
}

/** The scopes of run 1 that completed, and the records and children each walk listed. */
export function handCheckpoints(complete: Scope[], tallies: Record<string, { records: number; children: number }> = {}): Checkpoints {
  return { complete: () => new Set(complete.map((s) => s.key)), tallies: () => new Map(Object.entries(tallies)) } as unknown as Checkpoints;
}

/**
 * A copy of the version `vid` of `resource` (its row and its JSON beside), with the row's columns
 * in `set` (SQL, by column name; `hash` too) replaced, and an amount's cents with it; returns the
 * new vid. For corrupt histories.
 */
export function copyVersionRow(db: Database, resource: string, vid: number, set: Record<string, string> = {}): number {
  const cols = (db.prepare(`SELECT name FROM pragma_table_info('_${resource}_v') WHERE name <> 'vid'`).pluck().all() as string[]).filter((c) => c !== "hash");
  // An amount set by hand gets the cents the store would have written with it.
  set = { ...set };
  for (const c of Object.keys(set)) if (cols.includes(`${c}_cents`) && !(`${c}_cents` in set)) set[`${c}_cents`] = cents(set[c]!);
  const copy = Number(
    db.prepare(`INSERT INTO _${resource}_v (${cols.map((c) => `"${c}"`).join(", ")}) SELECT ${cols.map((c) => set[c] ?? `"${c}"`).join(", ")} FROM _${resource}_v WHERE vid = ?`).run(vid).lastInsertRowid,
  );
  db.prepare(`INSERT INTO _${resource}_d (vid, hash, data) SELECT ?, ${set.hash ?? "hash"}, data FROM _${resource}_d WHERE vid = ?`).run(copy, vid);
  return copy;
}

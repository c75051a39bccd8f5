/**
 * A run's state written by a test rather than by a sync: versions stored, ids seen, scopes walked
 * (complete, quarantined, fresh) and their tallies. The delete rules are asked directly on it, so a
 * test names every fact the answer depends on, and the answer is worked out by hand.
 */
import type { Database } from "better-sqlite3";
import type { Checkpoints } from "../../src/store/checkpoints.js";
import type { ActiveRun } from "../../src/store/run-state.js";
import type { Scope } from "../../src/store/scopes.js";

/** Store one version of a record (current, or ended by a later update) and return its vid. */
export function storeVersion(db: Database, resource: string, id: string, part: string | null, data: Record<string, unknown>, ended = false): number {
  return Number(
    db
      .prepare(`INSERT INTO _${resource}_v (id, valid_from_run, valid_to_run, op, ended_by, part, hash, data) VALUES (?, 1, ?, 'insert', ?, ?, 'h', ?)`)
      .run(id, ended ? 2 : null, ended ? "update" : null, part, JSON.stringify({ id, ...data })).lastInsertRowid,
  );
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

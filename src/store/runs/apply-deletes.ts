/**
 * Applying a finished walk's proven deletes (delete-plan.ts decides them, run-lifecycle.ts calls
 * this inside the run's final transaction): each current version is closed as deleted, with its
 * children and its absence record; a record this very run wrote is taken back instead.
 */
import type { Database } from "better-sqlite3";
import { ChildOf, type StoredResource } from "../schema/resources.js";
import type { DeletePlan } from "../walk/delete-plan.js";
import type { VersionStatements } from "../walk/versions.js";
import type { ActiveRun } from "./run-state.js";

/** Close what `p` proves gone, as of `run`; counted in the run's counts. */
export function applyDeletes(db: Database, versions: ReadonlyMap<StoredResource, VersionStatements>, run: ActiveRun, p: DeletePlan): void {
  const s = versions.get(p.resource)!;
  const close = (resource: StoredResource, vid: number) => {
    if (vid > (run.vidsBefore.get(resource) ?? 0)) dropTransient(db, run, resource, vid);
    else {
      versions.get(resource)!.close.run(run.runId, "delete", vid);
      run.counts.get(resource)!.deleted++;
    }
  };
  for (const vid of p.vids) close(p.resource, vid);
  if (p.ids.length === 0) return;
  const child = ChildOf[p.resource as keyof typeof ChildOf];
  const clearAbsence = db.prepare("DELETE FROM _absence WHERE resource = ? AND id = ?");
  for (const id of p.ids) {
    const cur = s.current.get(id) as { vid: number } | undefined;
    if (!cur) continue;
    close(p.resource, cur.vid);
    clearAbsence.run(p.resource, id);
    if (child) {
      const cs = versions.get(child.child)!;
      for (const row of cs.childrenOfOne.all(id) as { vid: number }[]) close(child.child, row.vid);
    }
  }
}

/**
 * Delete a record whose current version this very run wrote: an insert of this run simply
 * vanishes (the record never existed as of any run); an update of this run is dropped and the
 * version it replaced is closed as deleted instead. Either way the record changes once per run.
 */
function dropTransient(db: Database, run: ActiveRun, resource: StoredResource, vid: number): void {
  const row = db.prepare(`SELECT id, op FROM _${resource}_v WHERE vid = ?`).get(vid) as { id: string; op: string };
  db.prepare(`DELETE FROM _${resource}_v WHERE vid = ?`).run(vid);
  const counts = run.counts.get(resource)!;
  if (row.op === "insert") {
    counts.inserted--;
    return;
  }
  db.prepare(`UPDATE _${resource}_v SET ended_by = 'delete' WHERE id = ? AND valid_to_run = ? AND ended_by = 'update'`).run(row.id, run.runId);
  counts.updated--;
  counts.deleted++;
}

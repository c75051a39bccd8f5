/**
 * The snapshot's record of new field paths (table `new_fields`, see field-paths.ts): each path of
 * each resource once, with the first run that saw it. Paths only: the table never holds a value.
 */
import type { Database } from "better-sqlite3";
import { existsSync } from "node:fs";
import { openDatabase } from "./database.js";
import type { NewField } from "./field-paths.js";

export interface NewFieldRow {
  readonly resource: string;
  readonly path: string;
  readonly first_run_id: number;
  readonly first_seen_at: string;
}

/** Keep the first sighting of each path; later sightings change nothing. */
export function recordNewFields(db: Database, runId: number, at: string, fields: readonly NewField[]): void {
  if (fields.length === 0) return;
  const insert = db.prepare("INSERT OR IGNORE INTO new_fields (resource, path, first_run_id, first_seen_at) VALUES (?, ?, ?, ?)");
  for (const f of fields) insert.run(f.resource, f.path, runId, at);
}

/** The paths run `runId` was the first to see (or every path, without it), in a stable order. */
export function newFields(db: Database, runId?: number): NewFieldRow[] {
  const where = runId === undefined ? "" : "WHERE first_run_id = ?";
  const stmt = db.prepare(`SELECT resource, path, first_run_id, first_seen_at FROM new_fields ${where} ORDER BY resource, path`);
  return (runId === undefined ? stmt.all() : stmt.all(runId)) as NewFieldRow[];
}

/**
 * {@link newFields} of the snapshot file at `path`, read only (for `doctor`, the metrics, a run's
 * notice): undefined when there is no snapshot there yet; [] for one made before the table existed.
 *
 * @example newFieldsInFile("/var/lib/benefits-sync/benefits-sync.db") // [{ resource: "members", path: "pronouns", first_run_id: 2, ... }]
 */
export function newFieldsInFile(path: string, runId?: number): NewFieldRow[] | undefined {
  if (path === ":memory:" || !existsSync(path)) return undefined;
  const db = openDatabase(path, { readonly: true });
  try {
    return hasNewFieldsTable(db) ? newFields(db, runId) : [];
  } finally {
    db.close();
  }
}

/** Whether the snapshot has reached the migration that made `new_fields` (a read-only look cannot migrate it). */
export function hasNewFieldsTable(db: Database): boolean {
  return db.prepare("SELECT 1 FROM sqlite_master WHERE type = 'table' AND name = 'new_fields'").get() !== undefined;
}

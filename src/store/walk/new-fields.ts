/**
 * The snapshot's record of new field paths (table `new_fields`, see field-paths.ts): each path of
 * each resource once, with the first run that saw it and what the SSN rule made of it (`masked`).
 * Paths only: the table never holds a value.
 */
import type { Database } from "better-sqlite3";
import { existsSync } from "node:fs";
import { openDatabase } from "../file/database.js";
import type { NewField } from "./field-paths.js";
import type { MaskedAs } from "./field-masking.js";

export interface NewFieldRow {
  readonly resource: string;
  readonly path: string;
  readonly first_run_id: number;
  readonly first_seen_at: string;
  /** How the snapshot masked the field; null when it is stored as sent (or was recorded before migration 13). */
  readonly masked: MaskedAs | null;
}

/**
 * Keep the first sighting of each path; a later sighting changes nothing but a missing marker
 * (a path recorded before the marker existed gets it from the next run that sees it).
 */
export function recordNewFields(db: Database, runId: number, at: string, fields: readonly NewField[]): void {
  if (fields.length === 0) return;
  const insert = db.prepare(
    `INSERT INTO new_fields (resource, path, first_run_id, first_seen_at, masked) VALUES (?, ?, ?, ?, ?)
     ON CONFLICT (resource, path) DO UPDATE SET masked = coalesce(masked, excluded.masked)`,
  );
  for (const f of fields) insert.run(f.resource, f.path, runId, at, f.masked ?? null);
}

/** The paths run `runId` was the first to see (or every path, without it), in a stable order. */
export function newFields(db: Database, runId?: number): NewFieldRow[] {
  const where = runId === undefined ? "" : "WHERE first_run_id = ?";
  // A snapshot read before migration 13 (doctor, the metrics: read only) has no marker yet.
  const masked = hasMaskedColumn(db) ? "masked" : "NULL AS masked";
  const stmt = db.prepare(`SELECT resource, path, first_run_id, first_seen_at, ${masked} FROM new_fields ${where} ORDER BY resource, path`);
  return (runId === undefined ? stmt.all() : stmt.all(runId)) as NewFieldRow[];
}

/** How many new paths of each resource the SSN rule masked, by marker (for the metrics). */
export function maskedNewFieldCounts(db: Database): { resource: string; masked: MaskedAs; n: number }[] {
  if (!hasMaskedColumn(db)) return [];
  return db.prepare("SELECT resource, masked, count(*) AS n FROM new_fields WHERE masked IS NOT NULL GROUP BY resource, masked").all() as {
    resource: string;
    masked: MaskedAs;
    n: number;
  }[];
}

/**
 * {@link newFields} of the snapshot file at `path`, read only (for `doctor`, the metrics, a run's
 * notice): undefined when there is no snapshot there yet; [] for one made before the table existed.
 *
 * @example newFieldsInFile("/var/lib/benefits-sync/benefits-sync.db") // [{ resource: "members", path: "pronouns", first_run_id: 2, masked: null, ... }]
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

function hasMaskedColumn(db: Database): boolean {
  return db.prepare("SELECT 1 FROM pragma_table_info('new_fields') WHERE name = 'masked'").get() !== undefined;
}

/**
 * Version tables rebuilt in the layout of now (analyst-schema.ts), by the migrations: the typed
 * columns read again from each version's JSON, and the JSON moved beside the row (`_<r>_d`) when
 * the old table still held it (before migration 14).
 */
import type { Database } from "better-sqlite3";
import { createClaimLines } from "./claim-lines.js";
import type { MigrationProgress } from "./migration-progress.js";
import { createDataTable, createSyncIndexes, createVersionTable, createViews, dropViews, ensureIndexes, typedColumns, typedSelectSql } from "./analyst-schema.js";
import { StoredResources, type StoredResource } from "./resources.js";

/** Whether a resource's version table still holds its JSON (made before migration 14). */
const holdsJson = (db: Database, r: StoredResource): boolean => db.prepare(`SELECT 1 FROM pragma_table_info('_${r}_v') WHERE name = 'data'`).get() !== undefined;

/**
 * Rebuild every version table that still holds its JSON in the layout of now (migration 14's
 * work, done by the first migration that needs it: 8, 11 and 12 read the JSON where it lives
 * now), then its indexes, claim lines, counts and views. Returns whether there was any.
 */
export function splitVersionTables(db: Database, progress: MigrationProgress, n: number): boolean {
  const old = StoredResources.filter((r) => holdsJson(db, r));
  if (old.length === 0) return false;
  dropViews(db);
  for (const r of old) rebuildVersionTable(db, r, (done, total) => progress.step(n, `${r} versions`, done, total));
  // The lines of a snapshot made before their table (schema 10) are read out with the rows.
  createClaimLines(db, (done, total) => progress.step(n, "claim lines from the claim versions", done, total));
  ensureIndexes(
    db,
    {},
    (name, done, total) => progress.step(n, `index ${done + 1} of ${total} (${name})`),
    (table) => progress.step(n, `counts (${table})`),
  );
  createViews(db);
  return true;
}

const REBUILD_BATCH = 50_000;

/**
 * Copy a resource's version table into one made as analyst-schema.ts defines it now, its typed
 * columns read again from the JSON (moved to \`_<r>_d\` first when the old table held it), and put
 * the copy in its place with the sync's indexes (the caller builds the analysts' with
 * \`ensureIndexes\`, and drops and creates the views around it). Triggers on the JSON's table go
 * too (the claim lines' and counts', made again by \`ensureIndexes\`).
 */
export function rebuildVersionTable(db: Database, r: StoredResource, onBatch: (done: number, total: number) => void = () => {}): void {
  const cols = ["vid", "id", "valid_from_run", "valid_to_run", "op", "ended_by", "part", "changed_fields", "fp"];
  const moving = holdsJson(db, r);
  for (const t of db.prepare("SELECT name FROM sqlite_schema WHERE type = 'trigger' AND tbl_name = ?").pluck().all(`_${r}_d`) as string[]) db.exec(`DROP TRIGGER ${t}`);
  createVersionTable(db, r, `_${r}_v_typed`);
  // (Its trigger goes with the old table, and is made again on the new one below.)
  createDataTable(db, r);
  const json = moving ? db.prepare(`INSERT INTO _${r}_d (vid, hash, data) SELECT vid, hash, data FROM _${r}_v WHERE vid > ? AND vid <= ? ORDER BY vid`) : undefined;
  // Each field read once from the JSON, wherever it lives now (typedSelectSql).
  const from = `FROM _${r}_v o${moving ? "" : ` JOIN _${r}_d d ON d.vid = o.vid`} WHERE o.vid > ? AND o.vid <= ? ORDER BY o.vid`;
  const names = typedColumns(r).map((c) => `, "${c.name}"`).join("");
  const rows = db.prepare(`INSERT INTO _${r}_v_typed (${cols.join(", ")}${names}) ${typedSelectSql(r, moving ? "o.data" : "d.data", from, cols.map((c) => `o.${c}`))}`);
  const last = (db.prepare(`SELECT MAX(vid) FROM _${r}_v`).pluck().get() as number | null) ?? 0;
  for (let from = 0; from < last; from += REBUILD_BATCH) {
    const to = Math.min(last, from + REBUILD_BATCH);
    json?.run(from, to);
    rows.run(from, to);
    onBatch(to, last);
  }
  db.exec(`DROP TABLE _${r}_v; ALTER TABLE _${r}_v_typed RENAME TO _${r}_v;`);
  createDataTable(db, r);
  createSyncIndexes(db, r);
}

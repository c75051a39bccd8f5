/**
 * Does the snapshot hold the schema its header says (`PRAGMA user_version`)? A file restored with
 * a wrong header, or one whose header was edited, claims an older schema than it holds: migrating
 * it ran again steps it had (`table _suspects already exists`, exit 1) after the ones that could
 * run twice had already changed the file. Such a file is refused before anything writes to it.
 *
 * Which step makes each table and index is learnt by running the migrations once on an empty
 * database in memory (a few tens of milliseconds, only for a file whose header is behind this
 * code): the rule cannot drift from migrations.ts. The steps make today's tables, some earlier
 * than the releases that first made them, so a table is only ever said to be ahead of a file's
 * header when the step that makes it really comes after it. A step that only remakes views
 * leaves nothing to tell it by; it is one that can run twice.
 */
import BetterSqlite3 from "better-sqlite3";
import type { Database } from "better-sqlite3";
import { ConfigError } from "../../errors.js";
import { migrations } from "./migrations.js";

const OBJECTS = "SELECT name FROM sqlite_schema WHERE type IN ('table', 'index') AND name NOT LIKE 'sqlite\\_%' ESCAPE '\\'";

let madeAt: ReadonlyMap<string, number> | undefined;

/** Each table and index of the schema, with the schema version whose step first makes it. */
function firstMadeAt(): ReadonlyMap<string, number> {
  if (madeAt) return madeAt;
  const db = new BetterSqlite3(":memory:");
  const made = new Map<string, number>();
  try {
    migrations.forEach((step, i) => {
      db.transaction(() => step(db)).immediate();
      for (const name of db.prepare(OBJECTS).pluck().all() as string[]) if (!made.has(name)) made.set(name, i + 1);
    });
  } finally {
    db.close();
  }
  return (madeAt = made);
}

/**
 * Refuse (ConfigError, exit 2; nothing written) a snapshot whose header is behind what it holds.
 *
 * @example
 * checkSchemaHeader(db, "benefits-sync.db"); // before any pragma that writes, and before migrate()
 */
export function checkSchemaHeader(db: Database, path: string): void {
  // In one read transaction: another command creating this new snapshot may commit its first
  // migration between two reads, and a header of 0 read before it beside the tables read after it
  // looked like a lowered header (1 in 5 pairs of processes opening a new snapshot together).
  // deferred: read-only, it takes no write lock
  const { header, held } = db.transaction(() => ({
    header: db.pragma("user_version", { simple: true }) as number,
    held: db.prepare(OBJECTS).pluck().all() as string[],
  }))();
  if (header >= migrations.length) return;
  if (held.length === 0) return;
  const made = firstMadeAt();
  const ahead = held.filter((n) => (made.get(n) ?? 0) > header).sort((a, b) => made.get(b)! - made.get(a)! || a.localeCompare(b));
  if (ahead.length === 0) return;
  const at = made.get(ahead[0]!)!;
  const named = ahead.slice(0, 3).join(", ") + (ahead.length > 3 ? `, and ${ahead.length - 3} more` : "");
  throw new ConfigError(
    [
      `db: the snapshot ${path} says it has schema ${header} (PRAGMA user_version), but it holds what schema ${at} or later makes (${named}): ` +
        "its header is wrong, as in a file restored with another file's header or edited by hand, and converting it would make steps it has again. Nothing was changed. " +
        "Restore the snapshot whole from a backup (the file with its -wal), or point --db (BENEFITS_DB) at another snapshot",
    ],
    "file",
  );
}

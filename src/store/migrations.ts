import type { Database } from "better-sqlite3";
import { StoredResources, ViewColumns, columnName, type StoredResource } from "./resources.js";

/**
 * Schema migrations, applied in order by `PRAGMA user_version`. Each runs in one transaction, so
 * an interrupted migration leaves the previous version intact.
 *
 * Storage layout: one append-only version table per resource (`_<resource>_v`). A version row is
 * written once when a record is inserted or changed, and closed (`valid_to_run`) when it is
 * replaced or deleted. The current tables, the history and the `changes` feed are views derived
 * from it, so each observed change is written once, not three times.
 */
export const migrations: readonly ((db: Database) => void)[] = [
  (db) => {
    db.exec(`
      CREATE TABLE _runs (
        run_id INTEGER PRIMARY KEY AUTOINCREMENT,
        job TEXT NOT NULL,
        status TEXT NOT NULL CHECK (status IN ('running', 'succeeded', 'failed')),
        started_at TEXT NOT NULL,
        finished_at TEXT,
        options TEXT NOT NULL,
        resumed_from INTEGER REFERENCES _runs(run_id),
        pid INTEGER,
        host TEXT,
        error TEXT,
        -- Resources that had no current record when this run's walk began (inherited on resume):
        -- such a walk can prove no delete, so it keeps no seen ids.
        fresh TEXT NOT NULL DEFAULT '[]'
      );
      CREATE TABLE _run_counts (
        run_id INTEGER NOT NULL,
        resource TEXT NOT NULL,
        seen INTEGER NOT NULL DEFAULT 0,
        inserted INTEGER NOT NULL DEFAULT 0,
        updated INTEGER NOT NULL DEFAULT 0,
        deleted INTEGER NOT NULL DEFAULT 0,
        unchanged INTEGER NOT NULL DEFAULT 0,
        quarantined INTEGER NOT NULL DEFAULT 0,
        PRIMARY KEY (run_id, resource)
      ) WITHOUT ROWID;
      -- The walk's checkpoint: one row per scope (a resource plus its filters), written in the
      -- same transaction as the changes of the pages it covers.
      CREATE TABLE _walk (
        run_id INTEGER NOT NULL,
        scope TEXT NOT NULL,
        resource TEXT NOT NULL,
        filters TEXT NOT NULL,
        cursor TEXT,
        pages INTEGER NOT NULL DEFAULT 0,
        records INTEGER NOT NULL DEFAULT 0,
        complete INTEGER NOT NULL DEFAULT 0,
        quarantined INTEGER NOT NULL DEFAULT 0,
        PRIMARY KEY (run_id, scope)
      ) WITHOUT ROWID;
      -- Ids seen by the walk in progress (kept across a crash, so a resumed walk still proves
      -- deletes). Members, which one walk can list twice (a member in two groups), are kept one
      -- row per id to tell the second sighting; other resources one row per page, appended.
      CREATE TABLE _seen (
        resource TEXT NOT NULL,
        id TEXT NOT NULL,
        PRIMARY KEY (resource, id)
      ) WITHOUT ROWID;
      CREATE TABLE _seen_pages (resource TEXT NOT NULL, ids TEXT NOT NULL);
      -- The last walk's pages that were stored whole, by scope and cursor, with a keyed hash of
      -- their text: a page whose text has not changed is recognised without reading its items.
      -- Only the pages of the last successful walk are kept (see finishRun).
      CREATE TABLE _pages (
        scope TEXT NOT NULL,
        cursor TEXT NOT NULL,
        fp INTEGER NOT NULL,
        next TEXT,
        ids TEXT NOT NULL,
        run_id INTEGER NOT NULL,
        PRIMARY KEY (scope, cursor)
      ) WITHOUT ROWID;
      -- Consecutive complete absences, for the "delete after N absences" policy.
      CREATE TABLE _absence (
        resource TEXT NOT NULL,
        id TEXT NOT NULL,
        count INTEGER NOT NULL,
        PRIMARY KEY (resource, id)
      ) WITHOUT ROWID;
      CREATE TABLE _quarantine (
        run_id INTEGER NOT NULL,
        resource TEXT NOT NULL,
        scope TEXT NOT NULL,
        id TEXT,
        reason TEXT NOT NULL,
        excerpt TEXT NOT NULL,
        observed_at TEXT NOT NULL
      );
      CREATE VIEW quarantine AS SELECT run_id, resource, scope, id, reason, excerpt, observed_at FROM _quarantine;
      CREATE VIEW runs AS
        SELECT r.run_id, r.job, r.status, r.started_at, r.finished_at, r.resumed_from, r.error,
               COALESCE(SUM(c.seen), 0) AS seen, COALESCE(SUM(c.inserted), 0) AS inserted,
               COALESCE(SUM(c.updated), 0) AS updated, COALESCE(SUM(c.deleted), 0) AS deleted,
               COALESCE(SUM(c.unchanged), 0) AS unchanged, COALESCE(SUM(c.quarantined), 0) AS quarantined,
               r.options
        FROM _runs r LEFT JOIN _run_counts c ON c.run_id = r.run_id
        GROUP BY r.run_id;
      CREATE VIEW run_counts AS SELECT * FROM _run_counts;
    `);
    for (const r of StoredResources) createResource(db, r);
    db.exec(`CREATE VIEW changes AS ${StoredResources.map(changesSelect).join("\nUNION ALL\n")};`);
  },
  // 2: trust. A run holds the snapshot by a lease it renews (a run killed on another host or in a
  // restarted container is recognised by its lapsed lease); the snapshot remembers the service it
  // copies; deliveries of deltas are recorded per output (a ledger), not per run chain.
  (db) => {
    db.exec(`
      ALTER TABLE _runs ADD COLUMN owner TEXT;
      ALTER TABLE _runs ADD COLUMN lease_until TEXT;
      -- Facts about the snapshot itself: which service it copies (environment and base URL, never a key).
      CREATE TABLE _meta (key TEXT PRIMARY KEY, value TEXT NOT NULL) WITHOUT ROWID;
      -- One row per attempt to deliver deltas to an output (a CSV folder, later a warehouse).
      CREATE TABLE _deliveries (
        delivery_id INTEGER PRIMARY KEY AUTOINCREMENT,
        output TEXT NOT NULL,
        -- The run after which the delivery was made (a CSV delivery's folder is named after it).
        for_run INTEGER NOT NULL,
        -- JSON array of the run ids whose recorded changes it carries.
        runs TEXT NOT NULL,
        status TEXT NOT NULL CHECK (status IN ('pending', 'delivered', 'failed')),
        started_at TEXT NOT NULL,
        finished_at TEXT,
        error TEXT,
        detail TEXT
      );
      CREATE INDEX _deliveries_output ON _deliveries (output, status);
      -- Which runs' changes each output has received: a run is delivered to an output once.
      CREATE TABLE _delivered_runs (
        output TEXT NOT NULL,
        run_id INTEGER NOT NULL,
        delivery_id INTEGER NOT NULL,
        PRIMARY KEY (output, run_id)
      ) WITHOUT ROWID;
      -- Children (plans, coverages) that a re-read parent no longer lists: deleted when the run's
      -- walk succeeds, after the delete guard, and not at all when the child turns up under
      -- another parent in the same walk (a move is an update). Kept across a resume, like _seen.
      CREATE TABLE _child_gone (
        resource TEXT NOT NULL,
        vid INTEGER NOT NULL,
        scope TEXT NOT NULL,
        PRIMARY KEY (resource, vid)
      ) WITHOUT ROWID;
      -- The version ids a cached page's records had when it was stored: a page is recognised by
      -- its text only while every record on it is still at that version.
      ALTER TABLE _pages ADD COLUMN vids TEXT;
      -- Children the parents of a scope listed, over the run's chain (the per-scope delete rule).
      ALTER TABLE _walk ADD COLUMN children INTEGER NOT NULL DEFAULT 0;
      CREATE VIEW deliveries AS
        SELECT delivery_id, output, for_run, runs, status, started_at, finished_at, error FROM _deliveries;
    `);
  },
];

function createResource(db: Database, r: StoredResource): void {
  const cols = ViewColumns[r].map((p) => `json_extract(data, '$.${p}') AS "${columnName(p)}"`).join(", ");
  db.exec(`
    CREATE TABLE _${r}_v (
      vid INTEGER PRIMARY KEY,
      id TEXT NOT NULL,
      valid_from_run INTEGER NOT NULL,
      valid_to_run INTEGER,
      op TEXT NOT NULL CHECK (op IN ('insert', 'update')),
      -- Why the version stopped being current: replaced by an update, or the record was deleted.
      ended_by TEXT CHECK (ended_by IN ('update', 'delete')),
      part TEXT,
      changed_fields TEXT,
      -- A keyed hash of the text the server sent, so an unchanged record is recognised without
      -- re-serialising it; null where it must not be trusted (a child list was unreadable).
      fp INTEGER,
      -- SHA-256 of the canonical JSON (first 16 bytes, hex): a stable hash of the version.
      hash TEXT NOT NULL,
      data TEXT NOT NULL
    );
    -- Current versions by id, covering the fingerprint: the sync's per-page probe reads no table row.
    CREATE INDEX _${r}_v_current ON _${r}_v (id, fp) WHERE valid_to_run IS NULL;
    ${
      // Children (plans, coverages) are found by parent when the parent is observed; other parts
      // are only read for the few delete candidates, so they need no index.
      r === "plans" || r === "coverages" ? `CREATE INDEX _${r}_v_part ON _${r}_v (part) WHERE valid_to_run IS NULL;` : ""
    }
    CREATE VIEW "${r}" AS SELECT id, ${cols}, hash, data FROM _${r}_v WHERE valid_to_run IS NULL;
    CREATE VIEW "${r}_history" AS
      SELECT v.id, ${cols.replace(/json_extract\(data/g, "json_extract(v.data")}, v.hash, v.data, v.valid_from_run, v.valid_to_run, r.started_at AS observed_at
      FROM _${r}_v v JOIN _runs r ON r.run_id = v.valid_from_run;
  `);
}

function changesSelect(r: StoredResource): string {
  return `SELECT valid_from_run AS run_id, '${r}' AS resource, id, op, changed_fields FROM _${r}_v
UNION ALL
SELECT valid_to_run, '${r}', id, 'delete', NULL FROM _${r}_v WHERE ended_by = 'delete'`;
}

/** Bring the database to the latest schema. Refuses a database newer than this code. */
export function migrate(db: Database): void {
  const current = db.pragma("user_version", { simple: true }) as number;
  if (current > migrations.length) {
    throw new Error(
      `The snapshot database has schema version ${current}, newer than this benefits-sync (${migrations.length}): upgrade benefits-sync`,
    );
  }
  for (let v = current; v < migrations.length; v++) {
    db.transaction(() => {
      migrations[v]!(db);
      db.pragma(`user_version = ${v + 1}`);
    })();
  }
}

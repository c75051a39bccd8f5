import type { Database } from "better-sqlite3";
import { createClaimLines, deferClaimLines } from "./claim-lines.js";
import { ensureRollups } from "./rollups.js";
import { silentProgress, type MigrationProgress } from "./migration-progress.js";
import { analystIndexName, CoveredAlong, createDataTable, createSyncIndexes, createVersionTable, createViews, dropViews, ensureIndexes } from "./analyst-schema.js";
import { StoredResources, type StoredResource } from "./resources.js";
import { SNAPSHOT_APPLICATION_ID } from "../file/snapshot-file.js";
import { newSnapshotId } from "../file/snapshot-id.js";
import { rebuildVersionTable, splitVersionTables } from "./version-table-rebuild.js";

/**
 * Schema migrations, applied in order by `PRAGMA user_version`. Each runs in one transaction, so
 * an interrupted migration leaves the previous version intact.
 *
 * Storage layout: one append-only version table per resource (`_<resource>_v`). A version row is
 * written once when a record is inserted or changed, and closed (`valid_to_run`) when it is
 * replaced or deleted. The current tables, the history and the `changes` feed are views derived
 * from it, so each observed change is written once, not three times.
 *
 * The views are created by the last migration that changed them (each drops them all and creates
 * them again, see analyst-schema.ts); earlier migrations only ever made tables and indexes. The
 * tables are made as analyst-schema.ts defines them now, so the rebuild of migration 3 is a copy.
 */
export const migrations: readonly ((db: Database, progress?: MigrationProgress) => void)[] = [
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
    `);
    for (const r of StoredResources) {
      createVersionTable(db, r);
      createDataTable(db, r);
      createSyncIndexes(db, r);
    }
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
    `);
  },
  // 3: the analyst's snapshot (see analyst-schema.ts). The version tables are rebuilt with typed
  // columns (read from `data` as the rows are copied), then indexed; every view is
  // created again over them, with the new ones (field_changes, change_records, claim_lines,
  // memberships).
  (db) => {
    dropViews(db);
    for (const r of StoredResources) rebuildVersionTable(db, r);
    ensureIndexes(db);
    createViews(db);
  },
  // 4: the snapshot's own identity, so that a warehouse fed from it refuses another snapshot's
  // runs (run ids start at 1 in every snapshot).
  (db) => {
    db.prepare("INSERT OR IGNORE INTO _meta (key, value) VALUES ('snapshot_id', ?)").run(newSnapshotId());
  },
  // 5: records a failed run read but did not keep, to be looked up by the next runs (see
  // `unkeptClaims`): a claim read back inside the window and then deleted would otherwise stay.
  (db) => {
    db.exec("CREATE TABLE _suspects (resource TEXT NOT NULL, id TEXT NOT NULL, run_id INTEGER NOT NULL, PRIMARY KEY (resource, id)) WITHOUT ROWID");
  },
  // 6: the scheduled jobs' fires (src/jobs/fires.ts): the scheduler that claims a (job, slot) runs
  // it; another scheduler on the same snapshot sees the claim and skips that fire.
  (db) => {
    db.exec(`CREATE TABLE _job_fires (
      job TEXT NOT NULL, slot TEXT NOT NULL, reason TEXT NOT NULL, claimed_at TEXT NOT NULL, host TEXT, pid INTEGER,
      outcome TEXT, run_id INTEGER, finished_at TEXT, PRIMARY KEY (job, slot)) WITHOUT ROWID`);
  },
  // 7: mark the file as a snapshot (see snapshot-file.ts), so that it is told from another
  // application's SQLite file by its header alone.
  (db) => {
    db.pragma(`application_id = ${SNAPSHOT_APPLICATION_ID}`);
  },
  // 8: claim amounts keep the JSON value's type (analyst-schema.ts, MoneyType): a TEXT column
  // turned an amount sent as a number into text, whose generated cents were a number the service
  // never sent, where a claim line of the same amount had none. Only a claims table made with
  // TEXT amounts is rebuilt (a copy of every claim version, once).
  (db, progress = silentProgress) => {
    // A snapshot whose tables still hold their JSON is rebuilt whole (migration 14), TEXT amounts with it.
    splitVersionTables(db, progress, 8);
    const declared = db.prepare("SELECT type FROM pragma_table_info('_claims_v') WHERE name = 'claimAmount'").pluck().get();
    if (declared !== "TEXT") return;
    dropViews(db);
    rebuildVersionTable(db, "claims");
    // The rebuilt table keeps every vid: its lines stand, its triggers are made again (here).
    ensureIndexes(db);
    createViews(db);
  },
  // 9: field paths the schemas do not name, each with the first run that saw it (field-paths.ts),
  // so that a field the service added without notice is told once. Paths only, never a value.
  (db) => {
    db.exec(`CREATE TABLE IF NOT EXISTS new_fields (
      resource TEXT NOT NULL, path TEXT NOT NULL, first_run_id INTEGER NOT NULL, first_seen_at TEXT NOT NULL,
      PRIMARY KEY (resource, path)) WITHOUT ROWID`);
  },
  // 10: the run that read each cached page (page-cache.ts: a page is trusted only while nothing
  // on it, its records' children included, changed after that run).
  // Pages cached before the column existed have none and are not trusted (the next walk reads
  // them once).
  (db) => {
    const has = db.prepare("SELECT 1 FROM pragma_table_info('_pages') WHERE name = 'asserted_run'").get();
    if (!has) db.exec("ALTER TABLE _pages ADD COLUMN asserted_run INTEGER");
  },
  // 11: the analyst's snapshot at a million members: claim lines in a table of their own, written
  // with their claim version (claim-lines.ts), and indexes that answer the guide's scans without
  // reading the rows that carry the JSON (analyst-schema.ts, CoveredAlong). A snapshot made
  // before has its lines read out of every claim version once, with progress on a terminal.
  (db, progress = silentProgress) => {
    splitVersionTables(db, progress, 11);
    dropViews(db);
    // Made again with the columns they now cover (the names' index: in the members' history one).
    db.exec("DROP INDEX IF EXISTS _members_v_names");
    for (const [r, along] of Object.entries(CoveredAlong)) {
      for (const c of Object.keys(along)) db.exec(`DROP INDEX IF EXISTS ${analystIndexName(r as StoredResource, c)}`);
    }
    createClaimLines(db, (done, total) => progress.step(11, "claim lines from the claim versions", done, total));
    ensureIndexes(db, {}, (name, done, total) => progress.step(11, `index ${done + 1} of ${total} (${name})`));
    createViews(db);
    // Statistics, so the planner picks the new indexes from the first question on.
    analyze(db);
  },
  // 12: counts kept current per group, member and line code for the guide's everyday questions
  // (rollups.ts), and claim lines without their claim's id, read by the claim version's vid (what
  // it cost in size pays for the counts). A snapshot made before has its lines read out again and
  // its counts made once, with progress on a terminal.
  (db, progress = silentProgress) => {
    splitVersionTables(db, progress, 12);
    dropViews(db);
    if (db.prepare("SELECT 1 FROM pragma_table_info('_claim_lines') WHERE name = 'claim_id'").get()) {
      deferClaimLines(db);
      db.exec("DROP TABLE _claim_lines");
      createClaimLines(db, (done, total) => progress.step(12, "claim lines from the claim versions", done, total));
    }
    ensureRollups(db, new Set(), (table) => progress.step(12, `counts (${table})`));
    createViews(db);
  },
  // 13: what the SSN rule made of each new field path (src/store/walk/field-masking.ts): masked by its
  // name, as a typed pair's value, or a shape in its text; NULL when stored as sent. A path
  // recorded before has none until a run sees it again (new-fields.ts keeps the first run).
  (db) => {
    const has = db.prepare("SELECT 1 FROM pragma_table_info('new_fields') WHERE name = 'masked'").get();
    if (!has) db.exec("ALTER TABLE new_fields ADD COLUMN masked TEXT CHECK (masked IN ('name', 'typed', 'text'))");
  },
  // 14: analysts' own questions at a million members (issue 41): a version row holds the typed
  // columns only, its JSON and hash in \`_<resource>_d\` (analyst-schema.ts), so that a scan or a
  // GROUP BY of a view reads what a typed table would. Every version table is copied once, with
  // progress on a terminal (the rows, then the indexes), and the planner's statistics made again.
  (db, progress = silentProgress) => {
    if (!splitVersionTables(db, progress, 14)) return;
    analyze(db);
  },
  // 15: a claim's cents are plain columns written with the version, and the claims' member index
  // carries paid and billed cents (analyst-schema.ts, CoveredAlong): claims joined to their members
  // read no claim row. A claims table with generated cents is copied once (the JSON stays where it
  // is), then its indexes, lines' triggers and counts are made again, with progress on a terminal.
  (db, progress = silentProgress) => {
    const generated = db.prepare("SELECT 1 FROM pragma_table_xinfo('_claims_v') WHERE name = 'paidAmount_cents' AND hidden <> 0").get();
    const byMember = analystIndexName("claims", "memberId");
    // (A snapshot rebuilt by migration 14 just now has both already.)
    const covered = db.prepare(`SELECT 1 FROM pragma_index_info('${byMember}') WHERE name = 'paidAmount_cents'`).get();
    if (!generated && covered) return;
    dropViews(db);
    if (generated) rebuildVersionTable(db, "claims", (done, total) => progress.step(15, "claims versions", done, total));
    db.exec(`DROP INDEX IF EXISTS ${byMember}`);
    ensureIndexes(
      db,
      {},
      (name, done, total) => progress.step(15, `index ${done + 1} of ${total} (${name})`),
      (table) => progress.step(15, `counts (${table})`),
    );
    createViews(db);
    analyze(db);
  },
  // 16: history retention (prune.ts): the runs a prune removes leave a line each (pruned-runs.ts),
  // which the runs view lists as 'pruned' and the history views date their versions by.
  (db) => {
    dropViews(db);
    createViews(db);
  },
  // 17: every writer writes under the snapshot's key (key-guard.ts): a run records the check value
  // of the key it tokenised with, so that doctor names versions written under another key. Runs
  // from before record none (NULL).
  (db) => {
    const has = db.prepare("SELECT 1 FROM pragma_table_info('_runs') WHERE name = 'pii_key_check'").get();
    if (!has) db.exec("ALTER TABLE _runs ADD COLUMN pii_key_check TEXT");
  },
];

/** The planner's statistics made again, bounded: a sample of each index, not a read of the whole file. */
function analyze(db: Database): void {
  db.pragma("analysis_limit = 1000");
  db.exec("ANALYZE");
  db.pragma("analysis_limit = 0");
}

/** Bring the database to the latest schema. Refuses a database newer than this code. */
export function migrate(db: Database, progress: MigrationProgress = silentProgress): void {
  const current = db.pragma("user_version", { simple: true }) as number;
  if (current > migrations.length) {
    throw new Error(
      `The snapshot database has schema version ${current}, newer than this benefits-sync (${migrations.length}): upgrade benefits-sync`,
    );
  }
  if (current === migrations.length) return;
  // A new snapshot (schema 0: database.ts refuses a header of 0 over tables) is being made, not
  // upgraded: its steps run on empty tables and say nothing.
  if (current === 0) progress = silentProgress;
  try {
    // Each step under the write lock taken first (a migration may read before it writes, and SQLite
    // answers SQLITE_BUSY at once, with no busy wait, to a reader that wants to write while another
    // connection writes), its version read again under it: another process may have migrated.
    for (;;) {
      const done = db
        .transaction(() => {
          const v = db.pragma("user_version", { simple: true }) as number;
          if (v >= migrations.length) return true;
          migrations[v]!(db, progress);
          db.pragma(`user_version = ${v + 1}`);
          return false;
        })
        .immediate();
      if (done) break;
    }
  } finally {
    progress.finish();
  }
}

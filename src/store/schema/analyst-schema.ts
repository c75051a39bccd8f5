/**
 * The snapshot as analysts query it (`sqlite3`, DBeaver, Datasette): typed columns, indexes on what
 * they filter and join on, and the views of the contract.
 *
 * - Each version table (`_<resource>_v`) carries the documented scalar fields as typed columns,
 *   read from the record's JSON by SQLite in the very statement that writes the version
 *   (`insertVersionSql`, `refreshTypedSql`): a view reads a real column, never JSON, and an index
 *   on it answers a query alone.
 * - The JSON itself (`data`) and its `hash` live beside, in `_<resource>_d` by vid: a version row is
 *   a typed table's row, so a scan or a GROUP BY reads what a typed copy of the same columns would
 *   (at 100,000 members a claim row was 979 bytes with its JSON, 300 without; paid per member read
 *   2.1 times a typed copy's time). The views read `data` and `hash` by a subquery each, which
 *   SQLite leaves out when a query does not use them (a LEFT JOIN it keeps under GROUP BY).
 * - Money: the amount columns keep the service's decimal text (`paidAmount`, "1234.50"); each also
 *   has an integer cents column (`paidAmount_cents`) that sums exactly.
 * - Indexes: every foreign key (memberId, groupId, planId, coverageId, subscriberId, ...), service
 *   dates, statuses, and `(id, valid_from_run)` for history. A load into an empty resource drops
 *   them (and the sync's own) and builds them once at the end (`deferIndexes` / `ensureIndexes`):
 *   maintained row by row, random keys cost several times the load itself.
 */
import type { Database } from "better-sqlite3";
import { claimLinesView, createClaimLines, deferClaimLines } from "./claim-lines.js";
import { withBuildSettings } from "./bulk-build.js";
import { cents } from "./money-sql.js";
import { PrunedRunsDdl } from "../retention/pruned-runs.js";
import { deferRollups, ensureRollups, rollupViews } from "./rollups.js";
import { StoredResources, ViewColumns, columnName, type StoredResource } from "./resources.js";

/** Amount fields: decimal text, plus an exact integer cents column `<name>_cents`. */
export const MoneyColumns: Partial<Record<StoredResource, readonly string[]>> = {
  claims: ["claimAmount", "allowedAmount", "paidAmount"],
};

/** The columns analysts filter and join on: one index each. */
export const IndexedColumns: Record<StoredResource, readonly string[]> = {
  designs: [],
  groups: ["groupId"],
  plans: ["groupPolicyId", "basePlanDesignId"],
  members: ["subscriberId"],
  coverages: ["memberId", "groupId", "planId", "status"],
  claims: ["memberId", "groupId", "planId", "coverageId", "serviceDateFrom", "claimStatus"],
};

/** A JSON path SQLite reads whatever the key's characters: `$."address"."city"`. */
function jsonPath(path: string): string {
  return `$.${path.split(".").map((k) => `"${k.replace(/"/g, '""')}"`).join(".")}`.replace(/'/g, "''");
}

/**
 * An amount column's declared type: none, so that the column keeps the JSON value's own type (text
 * for `"12.50"`, real for a number). A TEXT column turned the number 12.5 into the text "12.5",
 * whose cents (1250) the claim had while the same amount on a claim line had none.
 */
const MoneyType = "";

/** A typed column: a field read from the JSON (`extract`), or the integer cents of an amount column (`centsOf`). */
export interface TypedColumn {
  readonly name: string;
  readonly type: string;
  readonly extract?: string;
  readonly centsOf?: string;
}

/**
 * The typed columns of one resource, in view order. All are plain columns written with each
 * version: a field is read from `source` (the stored JSON), an amount's cents from the amount as
 * read. Plain, not generated: SQLite never answers a query from an index alone when the index
 * holds a generated column, and the analysts' joins (claims by member, coverages by status) must.
 */
export function typedColumns(r: StoredResource, source = "data"): TypedColumn[] {
  const out: TypedColumn[] = [];
  for (const p of ViewColumns[r]) {
    const money = MoneyColumns[r]?.includes(p) ?? false;
    out.push({ name: columnName(p), type: money ? MoneyType : "TEXT", extract: `json_extract(${source}, '${jsonPath(p)}')` });
    if (money) out.push({ name: `${columnName(p)}_cents`, type: "INTEGER", centsOf: columnName(p) });
  }
  return out;
}

/**
 * Each typed column with one expression on `source` (the cents read the amount from the JSON
 * again: for the statements that write one row now and then, a rekey's refresh).
 */
export function writtenColumns(r: StoredResource, source = "data"): { name: string; extract: string }[] {
  const cols = typedColumns(r, source);
  const extractOf = (name: string) => cols.find((c) => c.name === name)!.extract!;
  return cols.map((c) => ({ name: c.name, extract: c.centsOf ? cents(extractOf(c.centsOf)) : c.extract! }));
}

/**
 * `SELECT <pass...>, <typed columns...> FROM (SELECT <pass...>, <fields read from source...> <from>)`:
 * the rows that write versions, each field read from the JSON once and each amount's cents
 * computed from the amount as read. The inner query has `LIMIT -1 OFFSET 0` so that SQLite does
 * not flatten it (an OFFSET forbids it): flattened, the cents rule, which names its amount seven
 * times, read the JSON seven times per amount (300,000 claims: 3.0 s to write against 1.75 s).
 */
export function typedSelectSql(r: StoredResource, source: string, from: string, pass: readonly string[] = []): string {
  const cols = typedColumns(r, source);
  const inner = [...pass.map((p, i) => `${p} AS p${i}`), ...cols.flatMap((c) => (c.extract ? [`${c.extract} AS "${c.name}"`] : []))];
  const outer = [...pass.map((_, i) => `p${i}`), ...cols.map((c) => (c.centsOf ? cents(`"${c.centsOf}"`) : `"${c.name}"`))];
  return `SELECT ${outer.join(", ")} FROM (SELECT ${inner.join(", ")} ${from} LIMIT -1 OFFSET 0)`;
}

/**
 * The statement that writes a version's row: `(id, valid_from_run, op, part, changed_fields, fp,
 * data)`, the typed columns read from `data` by SQLite as it writes; `data` itself (and its hash)
 * goes to `_<resource>_d` by the vid this returns ({@link insertDataSql}).
 */
export function insertVersionSql(r: StoredResource): string {
  const names = typedColumns(r).map((c) => `, "${c.name}"`).join("");
  return `INSERT INTO _${r}_v (id, valid_from_run, op, part, changed_fields, fp${names}) ${typedSelectSql(r, "d", "FROM (SELECT ? AS d)", ["?", "?", "?", "?", "?", "?"])}`;
}

/** `(vid, hash, data)`: a version's JSON, written right after its row. */
export const insertDataSql = (r: StoredResource): string => `INSERT INTO _${r}_d (vid, hash, data) VALUES (?, ?, ?)`;

/** The statement that reads the typed columns again from the version's `data` (after it was amended), by vid. */
export function refreshTypedSql(r: StoredResource): string {
  const typed = writtenColumns(r, "d.data");
  return (
    `UPDATE _${r}_v SET (${typed.map((c) => `"${c.name}"`).join(", ")}) = ` +
    `(SELECT ${typed.map((c) => c.extract).join(", ")} FROM _${r}_d d WHERE d.vid = _${r}_v.vid) WHERE vid = ?`
  );
}

/** The version table of a resource with its typed columns (`name` lets a migration build it aside). */
export function createVersionTable(db: Database, r: StoredResource, name = `_${r}_v`): void {
  const typed = typedColumns(r)
    .map((c) => `"${c.name}"${c.type ? ` ${c.type}` : ""}`)
    .join(",\n      ");
  db.exec(`
    CREATE TABLE ${name} (
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
      ${typed}
    )`);
}

/**
 * The JSON of a resource's versions by vid (`hash`: SHA-256 of the canonical JSON, first 16
 * bytes, hex), and the trigger that removes a version's JSON with its row, whichever code path
 * removes it. Made after the version table is in place (a migration renames it first).
 */
export function createDataTable(db: Database, r: StoredResource): void {
  db.exec(`
    CREATE TABLE IF NOT EXISTS _${r}_d (vid INTEGER PRIMARY KEY, hash TEXT NOT NULL, data TEXT NOT NULL);
    CREATE TRIGGER IF NOT EXISTS _${r}_v_data_delete AFTER DELETE ON _${r}_v BEGIN DELETE FROM _${r}_d WHERE vid = OLD.vid; END;`);
}

interface IndexSpec {
  readonly name: string;
  readonly on: string;
  readonly where?: string;
}

/** The indexes the sync itself reads while it diffs a walk against the snapshot. */
function syncIndexes(r: StoredResource): IndexSpec[] {
  return [
    // Current versions by id, covering the fingerprint: the sync's per-page probe reads no table row.
    { name: `_${r}_v_current`, on: "(id, fp)", where: "valid_to_run IS NULL" },
    // Children are found by parent when the parent is observed.
    ...(r === "plans" || r === "coverages" ? [{ name: `_${r}_v_part`, on: "(part)", where: "valid_to_run IS NULL" }] : []),
    // The changes of one run (`changes WHERE run_id = ?`).
    { name: `_${r}_v_from`, on: "(valid_from_run, op)" },
    { name: `_${r}_v_ended`, on: "(valid_to_run)", where: "ended_by IS NOT NULL" },
  ];
}

/**
 * Columns an analyst index carries after its own, so that the guide's questions
 * (docs/analyst-guide.md) and the everyday joins read no version row: at a million members a
 * question that reads rows at random, in an index's order, reads the file many times over. Keyed
 * by the index's column (`id`: the history index). Plain indexes, not partial ones: SQLite answers
 * from an index alone only when it holds `valid_to_run` itself.
 *
 * - members by id: names (claims joined to their members) and the members as of run N;
 * - coverages by id: a claim's coverage period (claims outside their coverage);
 * - coverages by member: `memberships` (group, status, dates); by status: distinct members;
 * - claims by service date: their coverage, checked before any claim row is read;
 * - claims by member: paid and billed cents (claims joined to members, paid per member: 2.2 times
 *   a typed copy at 1M members when each claim's row was read for them).
 */
export const CoveredAlong: Partial<Record<StoredResource, Record<string, readonly string[]>>> = {
  members: { id: ["valid_to_run", "lastName", "firstName", "subscriberId", "relationship", "address_state"] },
  coverages: { id: ["valid_to_run", "startDate", "endDate"], memberId: ["groupId", "status", "startDate", "endDate"], status: ["memberId"] },
  claims: { serviceDateFrom: ["coverageId"], memberId: ["paidAmount_cents", "claimAmount_cents"] },
};

/** The name of the analyst index on column `c` of `r` (`id`: the history index). */
export const analystIndexName = (r: StoredResource, c: string): string => (c === "id" ? `_${r}_v_history` : `_${r}_v_ix_${c}`);

const along = (r: StoredResource, c: string) => (CoveredAlong[r]?.[c] ?? []).map((x) => `, "${x}"`).join("");

/** The indexes analysts filter and join on (see IndexedColumns). */
function analystIndexes(r: StoredResource): IndexSpec[] {
  return [
    { name: analystIndexName(r, "id"), on: `(id, valid_from_run${along(r, "id")})` },
    // With valid_to_run: a question on the current rows is answered from the index alone.
    ...IndexedColumns[r].map((c) => ({ name: analystIndexName(r, c), on: `("${c}", valid_to_run${along(r, c)})` })),
  ];
}

function create(db: Database, r: StoredResource, ix: IndexSpec): void {
  db.exec(`CREATE INDEX IF NOT EXISTS ${ix.name} ON _${r}_v ${ix.on}${ix.where ? ` WHERE ${ix.where}` : ""}`);
}

/** The indexes the sync itself needs. */
export function createSyncIndexes(db: Database, r: StoredResource): void {
  for (const ix of syncIndexes(r)) create(db, r, ix);
}

/**
 * A run is about to load resources from empty: their indexes are dropped, to be built once when
 * the run ends (`ensureIndexes`). Kept row by row, random keys (ids, members, dates) cost several
 * times the load itself; built at the end, SQLite sorts each once.
 *
 * - `fresh`: resources empty when the run's chain began lose their analyst indexes.
 * - `empty`: resources that hold nothing at all (the chain's first run) lose the sync's indexes
 *   as well: every record they receive is an insert, looked up by nothing until the run ends.
 *   A resumed run diffs against what its chain stored, so it keeps them.
 */
export function deferIndexes(db: Database, fresh: Iterable<StoredResource>, empty: Iterable<StoredResource> = []): void {
  for (const r of fresh) for (const ix of analystIndexes(r)) db.exec(`DROP INDEX IF EXISTS ${ix.name}`);
  for (const r of empty) for (const ix of syncIndexes(r)) db.exec(`DROP INDEX IF EXISTS ${ix.name}`);
  // The claim lines are kept like an index, and built like one after a first load.
  if ([...empty].includes("claims")) deferClaimLines(db);
  // So are the counts kept per group, member and code (rollups.ts): counted once the load ends.
  deferRollups(db, fresh);
}

/**
 * Build whichever indexes are missing: the sync's on every resource but those in `loading.empty`,
 * the analysts' on every resource but those in `loading.fresh`, the claim lines unless claims
 * are loading from empty, and the rollups (rollups.ts) of resources not loading. With no argument,
 * all of them.
 */
export function ensureIndexes(
  db: Database,
  loading: { fresh?: ReadonlySet<StoredResource>; empty?: ReadonlySet<StoredResource> } = {},
  onIndex: (name: string, done: number, total: number) => void = () => {},
  onRollup?: (table: string) => void,
): void {
  const wanted = StoredResources.flatMap((r) => [
    ...(loading.empty?.has(r) ? [] : syncIndexes(r)).map((ix) => [r, ix] as const),
    ...(loading.fresh?.has(r) ? [] : analystIndexes(r)).map((ix) => [r, ix] as const),
  ]);
  const existing = new Set(db.prepare("SELECT name FROM sqlite_schema WHERE type = 'index'").pluck().all() as string[]);
  if (!loading.empty?.has("claims")) createClaimLines(db);
  const missing = wanted.filter(([, ix]) => !existing.has(ix.name));
  buildIndexes(db, missing, onIndex);
  // After the indexes: a rollup is counted from the analysts' indexes where it can.
  ensureRollups(db, new Set([...(loading.fresh ?? []), ...(loading.empty ?? [])]), onRollup ?? ((table) => onIndex(table, missing.length, missing.length + 1)));
}

function buildIndexes(db: Database, missing: (readonly [StoredResource, IndexSpec])[], onIndex: (name: string, done: number, total: number) => void): void {
  if (missing.length === 0) return;
  withBuildSettings(db, () =>
    missing.forEach(([r, ix], i) => {
      onIndex(ix.name, i, missing.length);
      create(db, r, ix);
    }),
  );
}

/** Every view of the contract, dropped (a migration rebuilds the tables under them). */
export function dropViews(db: Database): void {
  const views = db.prepare("SELECT name FROM sqlite_schema WHERE type = 'view'").pluck().all() as string[];
  for (const v of views) db.exec(`DROP VIEW "${v}"`);
}

/** The JSON (or its `hash`) of the version `alias` of `r`, by a subquery SQLite evaluates only when a query reads it. */
const dataOf = (r: StoredResource, alias: string, column = "data") => `(SELECT x.${column} FROM _${r}_d x WHERE x.vid = ${alias}.vid)`;

/** The views analysts query: see the README's analyst guide. */
export function createViews(db: Database): void {
  // The runs a prune removed (pruned-runs.ts): listed by the runs view, dating the versions they began.
  db.exec(PrunedRunsDdl);
  db.exec(`
    CREATE VIEW quarantine AS SELECT run_id, resource, scope, id, reason, excerpt, observed_at FROM _quarantine;
    CREATE VIEW runs AS
      SELECT r.run_id, r.job, r.status, r.started_at, r.finished_at, r.resumed_from, r.error,
             COALESCE(SUM(c.seen), 0) AS seen, COALESCE(SUM(c.inserted), 0) AS inserted,
             COALESCE(SUM(c.updated), 0) AS updated, COALESCE(SUM(c.deleted), 0) AS deleted,
             COALESCE(SUM(c.unchanged), 0) AS unchanged, COALESCE(SUM(c.quarantined), 0) AS quarantined,
             r.options
      FROM _runs r LEFT JOIN _run_counts c ON c.run_id = r.run_id
      GROUP BY r.run_id
      UNION ALL
      SELECT run_id, job, 'pruned', started_at, finished_at, NULL, NULL, seen, inserted, updated, deleted, unchanged, quarantined, NULL FROM _pruned_runs;
    CREATE VIEW run_counts AS SELECT run_id, resource, seen, inserted, updated, deleted, unchanged, quarantined FROM _run_counts;
    CREATE VIEW deliveries AS
      SELECT delivery_id, output, for_run, runs, status, started_at, finished_at, error FROM _deliveries;
  `);
  for (const r of StoredResources) {
    const cols = typedColumns(r).map((c) => `v."${c.name}"`);
    const text = `${dataOf(r, "v", "hash")} AS hash, ${dataOf(r, "v")} AS data`;
    db.exec(`
      CREATE VIEW "${r}" AS SELECT v.id, ${cols.join(", ")}, ${text} FROM _${r}_v v WHERE v.valid_to_run IS NULL;
      CREATE VIEW "${r}_history" AS
        SELECT v.id, ${cols.join(", ")}, ${text}, v.valid_from_run, v.valid_to_run,
               COALESCE((SELECT r.started_at FROM _runs r WHERE r.run_id = v.valid_from_run), (SELECT p.started_at FROM _pruned_runs p WHERE p.run_id = v.valid_from_run)) AS observed_at, v.op, v.ended_by
        FROM _${r}_v v;
    `);
  }
  const union = (f: (r: StoredResource) => string) => StoredResources.map(f).join("\nUNION ALL\n");
  // A pruned run's changes are gone (prune.ts): none is listed, rather than the few whose versions remain.
  const kept = "(SELECT coalesce(max(run_id) + 1, 0) FROM _pruned_runs)";
  // The version an update replaced: closed by the same run, as replaced.
  const before = (r: StoredResource) => `SELECT ${dataOf(r, "p")} FROM _${r}_v p WHERE p.id = v.id AND p.valid_to_run = v.valid_from_run AND p.ended_by = 'update'`;
  db.exec(`
    CREATE VIEW changes AS ${union(
      (r) => `SELECT valid_from_run AS run_id, '${r}' AS resource, id, op, changed_fields FROM _${r}_v WHERE valid_from_run >= ${kept}
UNION ALL
SELECT valid_to_run, '${r}', id, 'delete', NULL FROM _${r}_v WHERE ended_by = 'delete'`,
    )};
    CREATE VIEW change_records AS ${union(
      (r) => `SELECT v.valid_from_run AS run_id, '${r}' AS resource, v.id, v.op, (${before(r)}) AS before, ${dataOf(r, "v")} AS after FROM _${r}_v v WHERE v.valid_from_run >= ${kept}
UNION ALL
SELECT v.valid_to_run, '${r}', v.id, 'delete', ${dataOf(r, "v")}, NULL FROM _${r}_v v WHERE v.ended_by = 'delete'`,
    )};
    CREATE VIEW field_changes AS ${union(
      (r) => `SELECT v.valid_from_run AS run_id, '${r}' AS resource, v.id, f.value AS field,
  CASE WHEN f.value IN (${ViewColumns[r].map((p) => `'${p}'`).join(", ")}) THEN replace(f.value, '.', '_') END AS column_name,
  CASE f.value WHEN '(record)' THEN pd.data ELSE json_extract(pd.data, '$."' || replace(f.value, '.', '"."') || '"') END AS old_value,
  CASE f.value WHEN '(record)' THEN vd.data ELSE json_extract(vd.data, '$."' || replace(f.value, '.', '"."') || '"') END AS new_value
FROM _${r}_v v JOIN _${r}_v p ON p.id = v.id AND p.valid_to_run = v.valid_from_run AND p.ended_by = 'update'
  JOIN _${r}_d vd ON vd.vid = v.vid JOIN _${r}_d pd ON pd.vid = p.vid, json_each(v.changed_fields) f
WHERE v.op = 'update'`,
    )};
    ${claimLinesView}
    ${rollupViews}
    CREATE VIEW memberships AS
      SELECT memberId, groupId, COUNT(*) AS coverages, SUM(status = 'active') AS active_coverages,
             MIN(startDate) AS first_start_date,
             CASE WHEN COUNT(endDate) < COUNT(*) THEN NULL ELSE MAX(endDate) END AS last_end_date
      FROM _coverages_v WHERE valid_to_run IS NULL
      GROUP BY memberId, groupId;
  `);
}

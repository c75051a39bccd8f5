/**
 * Counts the store keeps current, so that the guide's everyday questions (members per group, the
 * members with the most claims, what was billed per procedure code, the members in several groups)
 * read a few thousand narrow rows at a million members instead of grouping millions (issue 26:
 * 5.4 s, 3.3 s, 47 s and 1.3 s before).
 *
 * Each is a table written by triggers on the version tables, in the statement that changes a
 * version, so every code path (a walk, an amend, a rollback, a delete, an SSN scrub, the webhook
 * worker) keeps it exact and nothing else writes it. A trigger adds what the version's new state
 * counts for and takes away what its old state counted for, so one rule covers inserts, closes,
 * reopens, amends and removals.
 *
 * - `_group_member_counts`: per group, the members with a current coverage in it and those with
 *   an active one (the `memberships` view, counted per group). A coverage's change moves a
 *   member in or out of a group only when it was the member's first or last coverage there: the
 *   trigger counts the member's current coverages in that group after the change (an index
 *   lookup: a member has a few) and infers the count before it.
 * - `_member_claim_counts`: per member id, the current claims that name it.
 * - `_procedure_totals`: per line code, the current lines, the claims that have one, and the lines'
 *   amounts in cents (the money rule of money-sql.ts, as the `claim_lines` view applies it).
 * - `_several_groups`: the members with current coverages in more than one group (a null group
 *   counts as one, as in `memberships`), and how many. A change of a member's coverage counts
 *   that member's groups again (an index lookup of a few rows), so only those members are kept.
 *
 * A load that writes a resource without its indexes (analyst-schema.ts, deferIndexes) drops the
 * triggers it feeds; `ensureRollups` counts the table again from scratch when they are missing.
 */
import type { Database } from "better-sqlite3";
import { withBuildSettings } from "./bulk-build.js";
import { createClaimLines } from "./claim-lines.js";
import { cents } from "./money-sql.js";
import type { StoredResource } from "./resources.js";

interface Rollup {
  /** The version table's resource whose changes it follows. */
  readonly source: StoredResource;
  readonly table: string;
  readonly create: string;
  /** Its triggers, by name. */
  readonly triggers: readonly string[];
  readonly createTriggers: string;
  /** Counted again from scratch. */
  readonly rebuild: string;
}

/** 1 when the version `v` (NEW or OLD) is current, else 0. */
const current = (v: string) => `(${v}.valid_to_run IS NULL)`;

type Kind = "insert" | "update" | "delete";

/**
 * Members per group, for the member and group of `v` (NEW or OLD) after a change of kind `kind`:
 * the member's current coverages in the group now (`n`, `a` of them active) and what the change
 * did to them (`dn`, `da`). The counts before are `n - dn` and `a - da`, so the member joined or
 * left the group's counts when one side is 0 and the other is not.
 */
function groupDelta(v: "NEW" | "OLD", kind: Kind, extraWhere = ""): string {
  const mine = (w: "NEW" | "OLD") => `(${w}.valid_to_run IS NULL AND ${w}.memberId IS ${v}.memberId AND ${w}.groupId IS ${v}.groupId)`;
  const active = (w: "NEW" | "OLD") => `(${mine(w)} AND ${w}.status IS 'active')`;
  const side = (w: "NEW" | "OLD" | null, f: (w: "NEW" | "OLD") => string) => (w === null ? "0" : f(w));
  const after = kind === "delete" ? null : "NEW";
  const before = kind === "insert" ? null : "OLD";
  return (
    `INSERT INTO _group_member_counts (groupId, members, active_members) ` +
    `SELECT ${v}.groupId, (x.n > 0) - (x.n - x.dn > 0), (x.a > 0) - (x.a - x.da > 0) FROM ` +
    `(SELECT COUNT(*) AS n, COUNT(CASE WHEN status = 'active' THEN 1 END) AS a, ` +
    `${side(after, mine)} - ${side(before, mine)} AS dn, ${side(after, active)} - ${side(before, active)} AS da ` +
    `FROM _coverages_v WHERE memberId IS ${v}.memberId AND valid_to_run IS NULL AND groupId IS ${v}.groupId) x ` +
    `WHERE ${v}.groupId IS NOT NULL${extraWhere} ` +
    `ON CONFLICT (groupId) DO UPDATE SET members = members + excluded.members, active_members = active_members + excluded.active_members; ` +
    `DELETE FROM _group_member_counts WHERE groupId = ${v}.groupId AND members = 0;`
  );
}

/** The statements of a group trigger for a change of kind `kind`. */
function groupStatements(kind: Kind): string {
  if (kind === "insert") return groupDelta("NEW", kind);
  if (kind === "delete") return groupDelta("OLD", kind);
  // The new state's member and group, then the old one's when it was another pair.
  return `${groupDelta("NEW", kind)} ${groupDelta("OLD", kind, " AND (OLD.memberId IS NOT NEW.memberId OR OLD.groupId IS NOT NEW.groupId)")}`;
}

/** The groups of member `m` (NEW.memberId or OLD.memberId), counted again: kept when more than one. */
function severalGroups(m: string): string {
  const groups = "COUNT(DISTINCT groupId) + MAX(groupId IS NULL)";
  return (
    `DELETE FROM _several_groups WHERE memberId = ${m}; ` +
    `INSERT INTO _several_groups (memberId, groups) SELECT ${m}, ${groups} FROM _coverages_v ` +
    `WHERE memberId = ${m} AND valid_to_run IS NULL HAVING ${groups} > 1;`
  );
}

/** Claims per member: +1 for the new state when current, -1 for the old. */
function memberClaims(v: "NEW" | "OLD", sign: 1 | -1): string {
  return (
    `INSERT INTO _member_claim_counts (memberId, claims) SELECT ${v}.memberId, ${sign} WHERE ${current(v)} AND ${v}.memberId IS NOT NULL ` +
    `ON CONFLICT (memberId) DO UPDATE SET claims = claims + excluded.claims; ` +
    `DELETE FROM _member_claim_counts WHERE memberId = ${v}.memberId AND claims = 0;`
  );
}

/**
 * Ends a subquery whose column `c` (a line's cents) the outer query reads twice (`COUNT(c)`,
 * `SUM(c)`): SQLite flattens such a subquery into its outer query and so evaluates the money rule
 * once per reference, unless the subquery has a LIMIT. Measured on the code totals at 100,000
 * members: 0.54 to 0.63 s with it against 0.77 to 0.82 s without.
 */
const ONCE = "LIMIT -1";

/**
 * What a claim version counts for per code (its lines as claim-lines.ts reads them), signed: its
 * JSON `data`, counted when `isCurrent` (SQL) holds.
 */
function procedureTotals(data: string, isCurrent: string, sign: 1 | -1): string {
  return (
    `INSERT INTO _procedure_totals (code_key, code, lines, claims, amounts, amount_cents) ` +
    `SELECT quote(code), code, ${sign} * COUNT(*), ${sign}, ${sign} * COUNT(c), ${sign} * COALESCE(SUM(c), 0) FROM ` +
    `(SELECT j.value ->> '$.code' AS code, ${cents("(j.value ->> '$.amount')")} AS c FROM json_each(${data}, '$.lines') j WHERE j.key IS NOT NULL AND ${isCurrent} ${ONCE}) ` +
    `WHERE true GROUP BY code ` +
    `ON CONFLICT (code_key) DO UPDATE SET lines = lines + excluded.lines, claims = claims + excluded.claims, ` +
    `amounts = amounts + excluded.amounts, amount_cents = amount_cents + excluded.amount_cents; ` +
    `DELETE FROM _procedure_totals WHERE lines = 0 AND code_key IN (SELECT quote(j.value ->> '$.code') FROM json_each(${data}, '$.lines') j);`
  );
}

/** The JSON of the claim version `v` (NEW or OLD of `_claims_v`), kept in `_claims_d`. */
const claimData = (v: "NEW" | "OLD") => `(SELECT data FROM _claims_d WHERE vid = ${v}.vid)`;
/** Whether the row of the claim version whose JSON is `d` (NEW or OLD of `_claims_d`) is current. */
const rowCurrent = (d: "NEW" | "OLD") => `EXISTS (SELECT 1 FROM _claims_v WHERE vid = ${d}.vid AND valid_to_run IS NULL)`;

const Rollups: readonly Rollup[] = [
  {
    source: "coverages",
    table: "_group_member_counts",
    create: `CREATE TABLE IF NOT EXISTS _group_member_counts (
      groupId TEXT PRIMARY KEY NOT NULL,
      -- Members with a current coverage in the group, and with an active one.
      members INTEGER NOT NULL,
      active_members INTEGER NOT NULL
    ) WITHOUT ROWID`,
    triggers: ["_coverages_v_groups_insert", "_coverages_v_groups_update", "_coverages_v_groups_delete"],
    createTriggers: `
      CREATE TRIGGER IF NOT EXISTS _coverages_v_groups_insert AFTER INSERT ON _coverages_v BEGIN ${groupStatements("insert")} END;
      CREATE TRIGGER IF NOT EXISTS _coverages_v_groups_update AFTER UPDATE OF valid_to_run, memberId, groupId, status ON _coverages_v BEGIN ${groupStatements("update")} END;
      CREATE TRIGGER IF NOT EXISTS _coverages_v_groups_delete AFTER DELETE ON _coverages_v BEGIN ${groupStatements("delete")} END;`,
    rebuild: `INSERT INTO _group_member_counts (groupId, members, active_members)
      SELECT groupId, COUNT(*), COUNT(CASE WHEN a > 0 THEN 1 END) FROM
        (SELECT memberId, groupId, COUNT(CASE WHEN status = 'active' THEN 1 END) AS a FROM _coverages_v
         WHERE valid_to_run IS NULL AND groupId IS NOT NULL GROUP BY memberId, groupId)
      GROUP BY groupId`,
  },
  {
    source: "coverages",
    table: "_several_groups",
    create: `CREATE TABLE IF NOT EXISTS _several_groups (memberId TEXT PRIMARY KEY NOT NULL, groups INTEGER NOT NULL) WITHOUT ROWID`,
    triggers: ["_coverages_v_several_insert", "_coverages_v_several_update", "_coverages_v_several_delete"],
    createTriggers: `
      CREATE TRIGGER IF NOT EXISTS _coverages_v_several_insert AFTER INSERT ON _coverages_v WHEN NEW.memberId IS NOT NULL BEGIN ${severalGroups("NEW.memberId")} END;
      CREATE TRIGGER IF NOT EXISTS _coverages_v_several_update AFTER UPDATE OF valid_to_run, memberId, groupId ON _coverages_v BEGIN
        ${severalGroups("NEW.memberId")}
        ${severalGroups("OLD.memberId")}
      END;
      CREATE TRIGGER IF NOT EXISTS _coverages_v_several_delete AFTER DELETE ON _coverages_v WHEN OLD.memberId IS NOT NULL BEGIN ${severalGroups("OLD.memberId")} END;`,
    // In the order of the coverages' member index, which carries the group: no sort.
    rebuild: `INSERT INTO _several_groups (memberId, groups)
      SELECT memberId, COUNT(DISTINCT groupId) + MAX(groupId IS NULL) FROM _coverages_v
      WHERE memberId IS NOT NULL AND valid_to_run IS NULL GROUP BY memberId HAVING COUNT(DISTINCT groupId) + MAX(groupId IS NULL) > 1`,
  },
  {
    source: "claims",
    table: "_member_claim_counts",
    create: `CREATE TABLE IF NOT EXISTS _member_claim_counts (memberId TEXT PRIMARY KEY NOT NULL, claims INTEGER NOT NULL) WITHOUT ROWID;
      -- The members with the most claims, read from the top.
      CREATE INDEX IF NOT EXISTS _member_claim_counts_top ON _member_claim_counts (claims DESC, memberId)`,
    triggers: ["_claims_v_members_insert", "_claims_v_members_update", "_claims_v_members_delete"],
    createTriggers: `
      CREATE TRIGGER IF NOT EXISTS _claims_v_members_insert AFTER INSERT ON _claims_v BEGIN ${memberClaims("NEW", 1)} END;
      CREATE TRIGGER IF NOT EXISTS _claims_v_members_update AFTER UPDATE OF valid_to_run, memberId ON _claims_v BEGIN ${memberClaims("OLD", -1)} ${memberClaims("NEW", 1)} END;
      CREATE TRIGGER IF NOT EXISTS _claims_v_members_delete AFTER DELETE ON _claims_v BEGIN ${memberClaims("OLD", -1)} END;`,
    rebuild: `INSERT INTO _member_claim_counts (memberId, claims)
      SELECT memberId, COUNT(*) FROM _claims_v WHERE valid_to_run IS NULL AND memberId IS NOT NULL GROUP BY memberId`,
  },
  {
    source: "claims",
    table: "_procedure_totals",
    create: `CREATE TABLE IF NOT EXISTS _procedure_totals (
      -- quote(code): one key per code, null included.
      code_key TEXT PRIMARY KEY NOT NULL,
      code,
      lines INTEGER NOT NULL,
      -- Current claims with at least one line of the code.
      claims INTEGER NOT NULL,
      -- Lines whose amount has cents, and their sum.
      amounts INTEGER NOT NULL,
      amount_cents INTEGER NOT NULL
    ) WITHOUT ROWID`,
    triggers: ["_claims_d_procedures_insert", "_claims_d_procedures_amend", "_claims_v_procedures_update", "_claims_v_procedures_delete"],
    // A version's JSON is written right after its row and removed right after it (analyst-schema.ts):
    // it is counted when its JSON arrives, and taken away before its row goes.
    createTriggers: `
      CREATE TRIGGER IF NOT EXISTS _claims_d_procedures_insert AFTER INSERT ON _claims_d BEGIN ${procedureTotals("NEW.data", rowCurrent("NEW"), 1)} END;
      CREATE TRIGGER IF NOT EXISTS _claims_d_procedures_amend AFTER UPDATE OF data ON _claims_d BEGIN
        ${procedureTotals("OLD.data", rowCurrent("OLD"), -1)} ${procedureTotals("NEW.data", rowCurrent("NEW"), 1)}
      END;
      CREATE TRIGGER IF NOT EXISTS _claims_v_procedures_update AFTER UPDATE OF valid_to_run ON _claims_v BEGIN
        ${procedureTotals(claimData("OLD"), current("OLD"), -1)} ${procedureTotals(claimData("NEW"), current("NEW"), 1)}
      END;
      CREATE TRIGGER IF NOT EXISTS _claims_v_procedures_delete BEFORE DELETE ON _claims_v BEGIN ${procedureTotals(claimData("OLD"), current("OLD"), -1)} END;`,
    // From the lines table (claim-lines.ts), current when this runs, in one sort: a claim counts
    // once per code however many lines of it it has. Measured at 1M members (8M lines, 4 MB
    // cache, 2 cores): 7.3 s, against 9.4 s for a lookup of an earlier line of the code per line
    // and 9 to 10 s for grouping by claim and code first.
    rebuild: `INSERT INTO _procedure_totals (code_key, code, lines, claims, amounts, amount_cents)
      SELECT quote(code), code, COUNT(*), COUNT(DISTINCT vid), COUNT(c), COALESCE(SUM(c), 0) FROM
        (SELECT l.vid, l.code, ${cents("l.amount")} AS c FROM _claim_lines l WHERE l.valid_to_run IS NULL ${ONCE})
      GROUP BY code`,
  },
];

/** Drop the triggers of the rollups that follow `resources` (a load without indexes is coming). */
export function deferRollups(db: Database, resources: Iterable<StoredResource>): void {
  const set = new Set(resources);
  for (const r of Rollups) if (set.has(r.source)) for (const t of r.triggers) db.exec(`DROP TRIGGER IF EXISTS ${t}`);
}

/**
 * Make the rollups whose triggers are missing (never made, or dropped by deferRollups), but for
 * those that follow a resource in `skip`: count each again from scratch, then put its triggers
 * back.
 */
export function ensureRollups(db: Database, skip: ReadonlySet<StoredResource> = new Set(), onRollup: (table: string) => void = () => {}): void {
  const triggers = new Set(db.prepare("SELECT name FROM sqlite_schema WHERE type = 'trigger'").pluck().all() as string[]);
  const missing = Rollups.filter((r) => !skip.has(r.source) && !r.triggers.every((t) => triggers.has(t)));
  if (missing.length > 0) withBuildSettings(db, () => missing.forEach((r) => rebuild(db, r, onRollup)));
}

/** Count `r` again from scratch, then put its triggers back. */
function rebuild(db: Database, r: Rollup, onRollup: (table: string) => void): void {
  onRollup(r.table);
  // The code totals are counted from the claim lines: current first (a no-op when they are).
  if (r.table === "_procedure_totals") createClaimLines(db);
  db.exec(r.create);
  for (const t of r.triggers) db.exec(`DROP TRIGGER IF EXISTS ${t}`);
  db.exec(`DELETE FROM ${r.table}`);
  db.exec(r.rebuild);
  db.exec(r.createTriggers);
}

/** The contract's views over the rollups (see the README's analyst guide). */
export const rollupViews = `
  CREATE VIEW group_member_counts AS SELECT groupId, members, active_members FROM _group_member_counts;
  CREATE VIEW member_claim_counts AS SELECT memberId, claims FROM _member_claim_counts;
  CREATE VIEW members_in_several_groups AS SELECT memberId, groups FROM _several_groups;
  CREATE VIEW procedure_totals AS
    SELECT code, lines, claims, CASE WHEN amounts > 0 THEN amount_cents END AS amount_cents FROM _procedure_totals;`;

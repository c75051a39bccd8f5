/**
 * Claim lines as a table of their own (`_claim_lines`), so that `claim_lines` reads narrow rows
 * instead of taking every current claim's JSON apart (at a million members, lines by procedure
 * took 18 times a typed table's time).
 *
 * The table is written by triggers on `_claims_v` and `_claims_d` (its JSON), in the statement
 * that writes the claim version: whichever code path inserts, amends, closes, reopens or removes a version (a walk, a
 * rollback, a delete, an SSN scrub), its lines follow, and nothing else writes them. Each line keeps
 * its version's `vid` and validity (`valid_from_run`, `valid_to_run`), so a claim's lines as of run
 * N are there as well as the current ones.
 */
import type { Database } from "better-sqlite3";
import { cents } from "./money-sql.js";

/**
 * The lines of the claim versions `v` (a table alias or NEW, with `valid_from_run`,
 * `valid_to_run`) whose JSON is `data`: one per item of its `lines` list (a claim's `lines` is a
 * list or nothing, see schemas/claim.ts), keyed by the item's index.
 */
const linesOf = (vid: string, data: string, from: string, where: string) =>
  `SELECT ${vid}, j.key, v.valid_from_run, v.valid_to_run, j.value ->> '$.code', j.value ->> '$.amount' ` +
  `FROM ${from}, json_each(${data}, '$.lines') j WHERE j.key IS NOT NULL AND ${where}`;

const COLUMNS = "vid, key, valid_from_run, valid_to_run, code, amount";

/** The lines of a version whose JSON was just written (`NEW` of `_claims_d`), with its row's validity. */
const linesOfNew = `INSERT INTO _claim_lines (${COLUMNS}) ${linesOf("NEW.vid", "NEW.data", "_claims_v v", "v.vid = NEW.vid")}`;

/** The triggers, by name: dropped while a first load fills an empty claims table. */
const TRIGGERS = ["_claims_d_lines_insert", "_claims_d_lines_amend", "_claims_v_lines_move", "_claims_v_lines_close", "_claims_v_lines_delete"];

/**
 * A first load into an empty claims table writes no line as it goes: a trigger per claim costs
 * several times the claim's own insert (measured on 274,241 claims: 6.5 s of CPU against 1.5 s
 * for the same lines read in one statement), so the lines are read from the loaded versions when
 * the load ends ({@link createClaimLines}, called with the indexes: analyst-schema.ts).
 */
export function deferClaimLines(db: Database): void {
  for (const t of TRIGGERS) db.exec(`DROP TRIGGER IF EXISTS ${t}`);
}

/**
 * The table and its triggers (idempotent), filled from the claim versions stored since the last
 * version that has lines (all of them in a snapshot made before the table; those of a first load,
 * see deferClaimLines), `batch` versions per statement, `onBatch(done, total)` after each.
 */
export function createClaimLines(db: Database, onBatch: (done: number, total: number) => void = () => {}, batch = 50_000): void {
  db.exec(`
    CREATE TABLE IF NOT EXISTS _claim_lines (
      vid INTEGER NOT NULL,
      -- The item's index in the list (line_no - 1).
      key NOT NULL,
      valid_from_run INTEGER NOT NULL,
      valid_to_run INTEGER,
      code,
      -- As sent (its cents are the view's, by the one money rule: money-sql.ts).
      amount,
      PRIMARY KEY (vid, key)
    ) WITHOUT ROWID;
    -- A version's JSON is written right after its row (analyst-schema.ts): its lines with it.
    CREATE TRIGGER IF NOT EXISTS _claims_d_lines_insert AFTER INSERT ON _claims_d BEGIN
      ${linesOfNew};
    END;
    -- A version amended in place (its JSON): its lines again, from what it holds now.
    CREATE TRIGGER IF NOT EXISTS _claims_d_lines_amend AFTER UPDATE OF data ON _claims_d BEGIN
      DELETE FROM _claim_lines WHERE vid = OLD.vid;
      ${linesOfNew};
    END;
    CREATE TRIGGER IF NOT EXISTS _claims_v_lines_move AFTER UPDATE OF valid_from_run ON _claims_v BEGIN
      UPDATE _claim_lines SET valid_from_run = NEW.valid_from_run WHERE vid = NEW.vid;
    END;
    CREATE TRIGGER IF NOT EXISTS _claims_v_lines_close AFTER UPDATE OF valid_to_run ON _claims_v BEGIN
      UPDATE _claim_lines SET valid_to_run = NEW.valid_to_run WHERE vid = NEW.vid;
    END;
    CREATE TRIGGER IF NOT EXISTS _claims_v_lines_delete AFTER DELETE ON _claims_v BEGIN
      DELETE FROM _claim_lines WHERE vid = OLD.vid;
    END;
  `);
  const last = (db.prepare("SELECT MAX(vid) FROM _claims_v").pluck().get() as number | null) ?? 0;
  const done = (db.prepare("SELECT MAX(vid) FROM _claim_lines").pluck().get() as number | null) ?? 0;
  if (done >= last) return;
  const fill = db.prepare(`INSERT INTO _claim_lines (${COLUMNS}) ${linesOf("v.vid", "d.data", "_claims_v v JOIN _claims_d d ON d.vid = v.vid", "v.vid > ? AND v.vid <= ?")}`);
  for (let from = done; from < last; from += batch) {
    fill.run(from, Math.min(last, from + batch));
    onBatch(Math.min(last, from + batch), last);
  }
}

/**
 * The contract's `claim_lines` view: the current versions' lines, with their claim's columns from
 * the claim's version row (a narrow row: its JSON lives apart). A LEFT JOIN on the row's key: SQLite
 * leaves it out of a plain query that reads no claim column, and turns it into an inner join it
 * may start from when a query filters on one (a member's lines start from the claims' member
 * index), where a subquery per column was evaluated for every line (lines of one member: a scan).
 */
export const claimLinesView = `
  CREATE VIEW claim_lines AS
    SELECT c.id AS claim_id, CAST(l.key AS INTEGER) + 1 AS line_no, c.memberId, c.groupId, c.serviceDateFrom,
           l.code, l.amount, ${cents("l.amount")} AS amount_cents
    FROM _claim_lines l LEFT JOIN _claims_v c ON c.vid = l.vid
    WHERE l.valid_to_run IS NULL;`;

/**
 * "As of run N" over the snapshot's version tables: the version of a record that run N saw began at
 * or before N and was not yet replaced or deleted (the README's question 6). Between two runs, the
 * records that moved are found from the versions that began or ended in (A, B], never by comparing
 * two full copies: an incremental period costs what changed in it, plus one scan for the counts.
 */
import type { Database } from "better-sqlite3";
import type { StoredResource } from "../store/schema/resources.js";
import type { Period } from "./periods.js";

/** The SQL condition "version `alias` is the one current as of run `param`". */
export const asOf = (alias: string, param: string): string =>
  `${alias}.valid_from_run <= ${param} AND (${alias}.valid_to_run IS NULL OR ${alias}.valid_to_run > ${param})`;

/** What every part of a report reads: the snapshot inside one read transaction, and the two periods. */
export interface ReportScope {
  readonly db: Database;
  readonly from: Period;
  readonly to: Period;
  /** The date "terminated" is judged against (a group whose plan year ended before it). */
  readonly asOfDate: string;
  /** Start date (UTC) of each run, to date the changes it observed. */
  readonly runDates: ReadonlyMap<number, string>;
}

/** Named parameters of every report statement. */
export const params = (s: ReportScope): { a: number; b: number } => ({ a: s.from.runId, b: s.to.runId });

/**
 * TEMP table `moves_<r>`: one row per record whose version as of A differs from its version as of
 * B (added, deleted, or changed with a different hash), with the two versions' vids (null where
 * absent) and the run that first saw the difference.
 */
export function createMoves(s: ReportScope, r: StoredResource): string {
  const t = `temp.moves_${r}`;
  s.db.exec(`DROP TABLE IF EXISTS ${t}`);
  s.db
    .prepare(
      `CREATE TABLE ${t} AS
       WITH ids AS (
         SELECT id FROM _${r}_v WHERE valid_from_run > :a AND valid_from_run <= :b
         UNION
         SELECT id FROM _${r}_v WHERE ended_by IS NOT NULL AND valid_to_run > :a AND valid_to_run <= :b
       )
       SELECT ids.id AS id, x.vid AS a_vid, y.vid AS b_vid,
              COALESCE(x.valid_to_run, (SELECT MIN(v.valid_from_run) FROM _${r}_v v WHERE v.id = ids.id AND v.valid_from_run > :a)) AS observed_run
       FROM ids
       LEFT JOIN _${r}_v x ON x.id = ids.id AND ${asOf("x", ":a")}
       LEFT JOIN _${r}_v y ON y.id = ids.id AND ${asOf("y", ":b")}
       WHERE (SELECT hash FROM _${r}_d WHERE vid = x.vid) IS NOT (SELECT hash FROM _${r}_d WHERE vid = y.vid)`,
    )
    .run(params(s));
  return t;
}

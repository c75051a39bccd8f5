/**
 * What a claims walk cannot see, said once per run instead of silently: a window that selected no
 * claim at all (a wrong window, or a service that filters differently), and stored claims whose
 * service dates lie outside the window (kept as last seen: no walk of this window reads them).
 * A run that resumes another counts the claims of the runs it resumes: their walk of the window
 * is its walk (its own walked only what they left).
 */
import type { ClaimsWindow } from "../extract/scopes.js";
import { openDatabase } from "../store/file/database.js";

export function claimsWindowNotices(dbPath: string, window: ClaimsWindow, seen: number, resumedFrom?: number): string[] {
  const out: string[] = [];
  const range = `${window.from} to ${window.to}`;
  const db = openDatabase(dbPath, { readonly: true });
  try {
    if (seen === 0 && (resumedFrom === undefined || seenByChain(db, resumedFrom) === 0)) {
      out.push(
        `The claims window (service dates ${range}) selected no claim. If claims were expected, check the window ` +
          "(--claims-since, --claims-until, resources.claims.lookbackDays) and resources.claims.dateParams.",
      );
    }
    const outside = db
      .prepare(`SELECT COUNT(*) FROM claims WHERE "serviceDateFrom" < ? OR "serviceDateFrom" > ?`)
      .pluck()
      .get(window.from, window.to) as number;
    if (outside > 0) {
      out.push(
        `${outside} stored claim${outside === 1 ? " has its service date" : "s have service dates"} outside the window (${range}): ` +
          "kept as last seen; no walk of this window reads them (a wider window, or --claims-since, does).",
      );
    }
  } finally {
    db.close();
  }
  return out;
}

/** The claims seen by run `runId` and the runs it resumed in turn. */
function seenByChain(db: ReturnType<typeof openDatabase>, runId: number): number {
  return db
    .prepare(
      `WITH RECURSIVE chain(run_id) AS (SELECT ? UNION SELECT r.resumed_from FROM _runs r JOIN chain c ON r.run_id = c.run_id WHERE r.resumed_from IS NOT NULL)
       SELECT COALESCE(SUM(seen), 0) FROM _run_counts WHERE resource = 'claims' AND run_id IN (SELECT run_id FROM chain)`,
    )
    .pluck()
    .get(runId) as number;
}

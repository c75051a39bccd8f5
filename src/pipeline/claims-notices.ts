/**
 * What a claims walk cannot see, said once per run instead of silently: a window that selected no
 * claim at all (a wrong window, or a service that filters differently), and stored claims whose
 * service dates lie outside the window (kept as last seen: no walk of this window reads them).
 */
import type { ClaimsWindow } from "../extract/scopes.js";
import { openDatabase } from "../store/database.js";

export function claimsWindowNotices(dbPath: string, window: ClaimsWindow, seen: number): string[] {
  const out: string[] = [];
  const range = `${window.from} to ${window.to}`;
  if (seen === 0) {
    out.push(
      `The claims window (service dates ${range}) selected no claim. If claims were expected, check the window ` +
        "(--claims-since, --claims-until, resources.claims.lookbackDays) and resources.claims.dateParams.",
    );
  }
  const db = openDatabase(dbPath, { readonly: true });
  try {
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

/**
 * The analyst guide's questions as printed (README "Questions, answered in SQL" and
 * docs/analyst-guide.md), by name: the bench times them and the tests run them exactly as a reader
 * would copy them, so both read them from the documents, never from a copy.
 */
import { readFileSync } from "node:fs";
import { join } from "node:path";

/** Every ```sql block whose first line is `-- question: NAME`, by name. */
export function readmeQuestions(text: string): Map<string, string> {
  const out = new Map<string, string>();
  for (const m of text.matchAll(/^```sql\r?\n([\s\S]*?)^```/gm)) {
    const sql = m[1]!;
    const name = /^-- question: ([a-z0-9]+(?:-[a-z0-9]+)*)\s*\r?\n/.exec(sql)?.[1];
    if (name === undefined) continue;
    if (out.has(name)) throw new Error(`README: question ${name} appears twice`);
    out.set(name, sql);
  }
  return out;
}

/** The guide's questions of the repository at `root`: the README answers the first, docs/analyst-guide.md the rest. */
export function guideQuestions(root: string): Map<string, string> {
  return readmeQuestions(`${readFileSync(join(root, "README.md"), "utf8")}\n${readFileSync(join(root, "docs", "analyst-guide.md"), "utf8")}`);
}

/**
 * What each count the store keeps (src/store/schema/rollups.ts) stands for: a grouping of the record
 * views, with the count view's columns in order. The typed copies define their counts by it (the
 * bench), and the simulation checks the store's counts against it on the snapshot itself.
 */
export const countGroupings: ReadonlyMap<string, string> = new Map([
  ["group_member_counts", "SELECT groupId, COUNT(*) AS members, SUM(active_coverages > 0) AS active_members FROM memberships WHERE groupId IS NOT NULL GROUP BY groupId"],
  ["member_claim_counts", "SELECT memberId, COUNT(*) AS claims FROM claims WHERE memberId IS NOT NULL GROUP BY memberId"],
  ["members_in_several_groups", "SELECT memberId, COUNT(*) AS groups FROM memberships WHERE memberId IS NOT NULL GROUP BY memberId HAVING COUNT(*) > 1"],
  ["procedure_totals", "SELECT code, COUNT(*) AS lines, COUNT(DISTINCT claim_id) AS claims, SUM(amount_cents) AS amount_cents FROM claim_lines GROUP BY code"],
]);

/**
 * The guide's questions that read the counts the store keeps (src/store/schema/rollups.ts), as an analyst
 * with only the record views would ask them: grouping `memberships`, `claims` and `claim_lines`.
 * Each must give the rows its printed form gives (the tests), and the bench times the printed
 * form on the snapshot against this one on typed copies (what typed tables alone would cost).
 */
export const groupedForms: ReadonlyMap<string, string> = new Map([
  [
    "members-per-group",
    `SELECT g.groupId, g.sponsorName, COUNT(*) AS members, SUM(ms.active_coverages > 0) AS active_members
FROM memberships ms JOIN groups g ON g.groupId = ms.groupId
GROUP BY g.groupId, g.sponsorName ORDER BY g.groupId`,
  ],
  [
    "top-members-by-claims",
    `SELECT m.id, m.firstName, m.lastName, COUNT(*) AS claims
FROM claims c JOIN members m ON m.id = c.memberId
GROUP BY m.id, m.firstName, m.lastName ORDER BY claims DESC, m.id LIMIT 5`,
  ],
  [
    "members-in-several-groups",
    `SELECT ms.memberId, m.firstName, m.lastName, COUNT(*) AS groups
FROM memberships ms JOIN members m ON m.id = ms.memberId
GROUP BY ms.memberId, m.firstName, m.lastName HAVING COUNT(*) > 1 ORDER BY ms.memberId`,
  ],
  [
    "claim-lines-by-procedure",
    `SELECT code, COUNT(*) AS lines, COUNT(DISTINCT claim_id) AS claims, SUM(amount_cents) AS amount_cents,
       printf('%d.%02d', SUM(amount_cents) / 100, SUM(amount_cents) % 100) AS amount
FROM claim_lines GROUP BY code ORDER BY amount_cents DESC, code`,
  ],
]);

/**
 * Questions of an analyst's own, beside the guide's (issue 41): the filters, GROUP BYs and joins on
 * the documented columns, ids and foreign keys an analyst asks every day, none of them served by a
 * count the store keeps. The bench times each on the views against a typed, indexed copy of the
 * same rows (analyst-guide.ts), and guide-parity.test.ts asks each on both after every run of a
 * chain: the same rows. Parameters: `:member_id` (a member with claims), `:group_id` (a group with
 * coverages), `:run_id`.
 */
export const ownQuestions: ReadonlyMap<string, string> = new Map([
  [
    "lines-by-code",
    "SELECT code, COUNT(*) AS lines, COUNT(DISTINCT claim_id) AS claims, SUM(amount_cents) AS cents FROM claim_lines GROUP BY code ORDER BY code",
  ],
  ["lines-of-member", "SELECT claim_id, line_no, code, amount FROM claim_lines WHERE memberId = :member_id ORDER BY claim_id, line_no"],
  [
    "billed-per-group-month",
    "SELECT groupId, substr(serviceDateFrom, 1, 7) AS month, COUNT(*) AS lines, SUM(amount_cents) AS cents FROM claim_lines GROUP BY 1, 2 ORDER BY 1, 2",
  ],
  ["paid-per-member-top100", "SELECT memberId, SUM(paidAmount_cents) AS paid, COUNT(*) AS claims FROM claims GROUP BY memberId ORDER BY paid DESC, memberId LIMIT 100"],
  ["coverages-per-plan-status", "SELECT planId, status, COUNT(*) AS coverages FROM coverages GROUP BY planId, status ORDER BY 1, 2"],
  [
    "active-members-of-group",
    `SELECT m.id, m.lastName, m.firstName, c.id AS coverage_id, c.planId, c.startDate
FROM members m JOIN coverages c ON c.memberId = m.id
WHERE c.groupId = :group_id AND c.status = 'active' ORDER BY m.id, c.id`,
  ],
  ["member-history", "SELECT id, valid_from_run, valid_to_run, lastName, address_city, address_state FROM members_history WHERE id = :member_id ORDER BY valid_from_run"],
  [
    "run-changes-joined",
    `SELECT ch.op, m.id, m.lastName, m.address_state
FROM changes ch JOIN members m ON m.id = ch.id
WHERE ch.run_id = :run_id AND ch.resource = 'members' ORDER BY m.id, ch.op`,
  ],
  ["members-per-state", "SELECT address_state, COUNT(*) AS members FROM members GROUP BY address_state ORDER BY address_state"],
  [
    "claims-by-status-month",
    "SELECT claimStatus, substr(serviceDateFrom, 1, 7) AS month, COUNT(*) AS claims, SUM(claimAmount_cents) AS billed FROM claims GROUP BY 1, 2 ORDER BY 1, 2",
  ],
  ["claims-of-group-since", "SELECT id, memberId, serviceDateFrom, claimAmount FROM claims WHERE groupId = :group_id AND serviceDateFrom >= '2025-10-01' ORDER BY id"],
  [
    "claims-by-member-state",
    `SELECT m.address_state, COUNT(*) AS claims, SUM(c.paidAmount_cents) AS paid
FROM claims c JOIN members m ON m.id = c.memberId GROUP BY m.address_state ORDER BY m.address_state`,
  ],
  ["memberships-of-group", "SELECT memberId, coverages, active_coverages, first_start_date FROM memberships WHERE groupId = :group_id ORDER BY memberId"],
  ["field-changes-of-run", "SELECT resource, field, COUNT(*) AS changes FROM field_changes WHERE run_id = :run_id GROUP BY resource, field ORDER BY resource, field"],
]);

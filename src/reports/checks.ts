/**
 * Consistency checks on the data as of B. Each finding names the record it is about (a claim, a
 * coverage, or two overlapping coverages as `a+b`), its member, group and plan, and says why.
 * Coverages, plans and groups as of B are copied into TEMP tables with the indexes the checks join
 * on, so each check is one pass over its records whatever the size of the snapshot.
 */
import { asOf, params, type ReportScope } from "./as-of.js";
import { CheckNames, type CheckName } from "./check-names.js";

export interface Finding {
  check: CheckName;
  /** The record the finding is about: a claim id, a coverage id, or `coverageA+coverageB`. */
  record_id: string;
  member_id: string;
  claim_id: string;
  coverage_id: string;
  group_id: string;
  plan_id: string;
  detail: string;
}
export const FindingColumns = ["check", "record_id", "member_id", "claim_id", "coverage_id", "group_id", "plan_id", "detail"] as const satisfies readonly (keyof Finding)[];

const s = (v: unknown): string => (v === null || v === undefined ? "" : String(v));
const range = (from: unknown, to: unknown): string => `${s(from) || "?"}..${s(to) || "open"}`;

/** Run every check; each finding goes to `onFinding`. Returns the number per check. */
export function runChecks(scope: ReportScope, onFinding: (f: Finding) => void): Record<CheckName, number> {
  const { db } = scope;
  const p = params(scope);
  const counts = Object.fromEntries(CheckNames.map((c) => [c, 0])) as Record<CheckName, number>;
  const emit = (f: Finding): void => {
    counts[f.check]++;
    onFinding(f);
  };
  db.exec("DROP TABLE IF EXISTS temp.cov_b; DROP TABLE IF EXISTS temp.plans_b; DROP TABLE IF EXISTS temp.groups_b");
  db.prepare(`CREATE TABLE temp.cov_b AS SELECT id, memberId, groupId, groupPolicyId, planId, status, startDate, endDate FROM _coverages_v c WHERE ${asOf("c", ":b")}`).run({ b: p.b });
  db.prepare(`CREATE TABLE temp.plans_b AS SELECT id, groupPolicyId FROM _plans_v x WHERE ${asOf("x", ":b")}`).run({ b: p.b });
  db.prepare(`CREATE TABLE temp.groups_b AS SELECT id, groupId, terminationDate FROM _groups_v g WHERE ${asOf("g", ":b")}`).run({ b: p.b });
  db.exec(`
    CREATE INDEX temp.cov_b_member_group ON cov_b (memberId, groupId);
    CREATE INDEX temp.cov_b_member_plan ON cov_b (memberId, planId);
    CREATE INDEX temp.plans_b_policy ON plans_b (groupPolicyId, id);
    CREATE INDEX temp.groups_b_number ON groups_b (groupId);
    CREATE INDEX temp.groups_b_id ON groups_b (id);
  `);

  // Claims: the member has no coverage in the claim's group (covered is null); or has, but none
  // spans the service dates (covered is 0). One index lookup per claim; the spans are read for
  // the claims flagged only.
  const claims = db.prepare(
    `SELECT * FROM (
       SELECT c.id, c.memberId, c.groupId, c.planId, c.coverageId, c.serviceDateFrom, c.serviceDateTo,
              (SELECT MAX(COALESCE(k.startDate <= c.serviceDateFrom AND (k.endDate IS NULL OR k.endDate >= COALESCE(c.serviceDateTo, c.serviceDateFrom)), 0))
                 FROM cov_b k WHERE k.memberId = c.memberId AND k.groupId = c.groupId) AS covered,
              (c.claimAmount IS NOT NULL AND c.claimAmount_cents IS NULL) OR (c.allowedAmount IS NOT NULL AND c.allowedAmount_cents IS NULL)
                OR (c.paidAmount IS NOT NULL AND c.paidAmount_cents IS NULL) AS inexact
       FROM _claims_v c WHERE ${asOf("c", ":b")})
     WHERE covered IS NULL OR covered = 0 OR inexact
     ORDER BY +id`,
  );
  const spans = db
    .prepare("SELECT group_concat(COALESCE(startDate, '?') || '..' || COALESCE(endDate, 'open'), ', ') FROM cov_b WHERE memberId = ? AND groupId = ?")
    .pluck();
  for (const r of claims.iterate({ b: p.b }) as Iterable<Record<string, unknown>>) {
    const base = { record_id: s(r.id), member_id: s(r.memberId), claim_id: s(r.id), coverage_id: s(r.coverageId), group_id: s(r.groupId), plan_id: s(r.planId) };
    if (r.covered === null) emit({ check: "claim_member_not_covered_in_group", ...base, detail: `member ${s(r.memberId)} has no coverage in group ${s(r.groupId)} as of run ${p.b}` });
    else if (r.covered === 0) {
      const span = s(spans.get(r.memberId, r.groupId));
      emit({ check: "claim_outside_coverage", ...base, detail: `service ${range(r.serviceDateFrom, r.serviceDateTo ?? r.serviceDateFrom)}; coverage in group ${s(r.groupId)}: ${span}` });
    }
    if (r.inexact) emit({ check: "claim_amount_not_decimal", ...base, detail: "an amount is not a decimal with at most two places; the sums leave it out" });
  }

  // The group policy of a coverage: by its groupPolicyId, or by its group number when it has none.
  const policy = (k: string) => `(g.id = ${k}.groupPolicyId OR (${k}.groupPolicyId IS NULL AND g.groupId = ${k}.groupId))`;
  const covBase = (r: Record<string, unknown>) => ({ record_id: s(r.id), member_id: s(r.memberId), claim_id: "", coverage_id: s(r.id), group_id: s(r.groupId), plan_id: s(r.planId) });
  const badPlan = db.prepare(
    `SELECT k.* FROM cov_b k
     WHERE NOT EXISTS (SELECT 1 FROM plans_b x JOIN groups_b g ON g.id = x.groupPolicyId WHERE x.id = k.planId AND ${policy("k")})
     ORDER BY k.id`,
  );
  for (const r of badPlan.iterate() as Iterable<Record<string, unknown>>) {
    emit({ check: "coverage_plan_not_in_group", ...covBase(r), detail: `plan ${s(r.planId) || "(none)"} is not a plan of group policy ${s(r.groupPolicyId) || `with group number ${s(r.groupId)}`} as of run ${p.b}` });
  }

  const ended = db.prepare(
    `SELECT k.*, g.terminationDate FROM cov_b k JOIN groups_b g ON ${policy("k")}
     WHERE COALESCE(k.status, '') <> 'terminated' AND g.terminationDate IS NOT NULL AND g.terminationDate < :asof
       AND (k.endDate IS NULL OR k.endDate > g.terminationDate)
     ORDER BY k.id`,
  );
  for (const r of ended.iterate({ asof: scope.asOfDate }) as Iterable<Record<string, unknown>>) {
    emit({
      check: "member_of_terminated_group",
      ...covBase(r),
      detail: `coverage ${s(r.status) || "(no status)"} ${range(r.startDate, r.endDate)}; group ${s(r.groupId)} ended ${s(r.terminationDate)} (before ${scope.asOfDate})`,
    });
  }

  const overlaps = db.prepare(
    `SELECT x.memberId, x.groupId, x.planId, x.id AS a, y.id AS b, x.startDate AS a_start, x.endDate AS a_end, y.startDate AS b_start, y.endDate AS b_end
     FROM cov_b x JOIN cov_b y ON y.memberId = x.memberId AND y.planId = x.planId AND y.id > x.id
     WHERE x.startDate <= COALESCE(y.endDate, '9999-12-31') AND y.startDate <= COALESCE(x.endDate, '9999-12-31')
     ORDER BY x.memberId, x.id, y.id`,
  );
  for (const r of overlaps.iterate() as Iterable<Record<string, unknown>>) {
    emit({
      check: "overlapping_coverages",
      record_id: `${s(r.a)}+${s(r.b)}`,
      member_id: s(r.memberId),
      claim_id: "",
      coverage_id: `${s(r.a)} ${s(r.b)}`,
      group_id: s(r.groupId),
      plan_id: s(r.planId),
      detail: `coverages ${range(r.a_start, r.a_end)} and ${range(r.b_start, r.b_end)} on plan ${s(r.planId)} overlap`,
    });
  }
  return counts;
}

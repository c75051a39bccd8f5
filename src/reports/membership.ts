/**
 * Membership at A and at B and the movement between them, in enrollment terms: each coverage (one
 * member on one plan) that differs between the two runs is an addition, a termination, a
 * reinstatement, a change or a deletion. The counts are taken once more, independently, by
 * scanning both periods, and the report checks that A + movement = B in every cell (group, plan,
 * status) and for the members; a cell that does not add up fails the report.
 */
import { changedFields } from "../store/walk/field-diff.js";
import { asOf, createMoves, params, type ReportScope } from "./as-of.js";
import { cmp } from "./order.js";

export const MovementKinds = ["addition", "termination", "reinstatement", "change", "deletion"] as const;
export type MovementKind = (typeof MovementKinds)[number];

/** ANSI X12 834 maintenance type codes. A deletion at the service goes out as a termination. */
export const MaintenanceCode: Record<MovementKind, string> = { addition: "021", termination: "024", deletion: "024", reinstatement: "025", change: "001" };

/** One (group policy, plan, status) cell: coverages at A, the movement, at B. */
export interface MembershipCell {
  groupPolicyId: string;
  groupId: string;
  planId: string;
  status: string;
  from: number;
  added: number;
  deleted: number;
  movedIn: number;
  movedOut: number;
  to: number;
  /** from + added - deleted + movedIn - movedOut === to */
  holds: boolean;
}

export interface MembershipFigures {
  members: { from: number; to: number; added: number; deleted: number; changed: number; holds: boolean };
  /** Coverages by status (every status seen), at A and B. */
  byStatus: { status: string; from: number; to: number }[];
  cells: MembershipCell[];
  movement: Record<MovementKind, number>;
  /** Coverages present at both runs whose status changed: `from -> to` with a count. */
  statusChanges: { from: string; to: string; count: number }[];
  holds: boolean;
}

/** One row of the eligibility change file (and, with type 030, of the audit file). */
export interface EligibilityRow {
  maintenance_type: string;
  maintenance: string;
  reason: string;
  effective_date: string;
  member_id: string;
  subscriber_id: string;
  relationship: string;
  last_name: string;
  first_name: string;
  date_of_birth: string;
  coverage_id: string;
  group_id: string;
  group_policy_id: string;
  plan_id: string;
  status_from: string;
  status_to: string;
  start_date: string;
  end_date: string;
  changed_fields: string;
  observed_run: string;
}

export const EligibilityColumns = [
  "maintenance_type", "maintenance", "reason", "effective_date", "member_id", "subscriber_id", "relationship", "last_name", "first_name",
  "date_of_birth", "coverage_id", "group_id", "group_policy_id", "plan_id", "status_from", "status_to", "start_date", "end_date",
  "changed_fields", "observed_run",
] as const satisfies readonly (keyof EligibilityRow)[];

const NONE = "(none)";
const s = (v: unknown): string => (v === null || v === undefined ? "" : String(v));
const statusOf = (v: unknown): string => (v === null || v === undefined ? NONE : String(v));
const isTerminated = (status: string): boolean => status === "terminated";

interface CovSide {
  memberId: string | null;
  groupId: string | null;
  groupPolicyId: string | null;
  planId: string | null;
  status: string | null;
  startDate: string | null;
  endDate: string | null;
  data: string;
}
interface MemberSide {
  subscriberId: string | null;
  relationship: string | null;
  lastName: string | null;
  firstName: string | null;
  dateOfBirth: string | null;
}

const cellKey = (c: { groupPolicyId: unknown; groupId: unknown; planId: unknown; status: unknown }): string =>
  JSON.stringify([s(c.groupPolicyId), s(c.groupId), s(c.planId), statusOf(c.status)]);

/** The movement of one coverage present at A or B (or both, different). */
export function classify(a: { status: string | null } | undefined, b: { status: string | null } | undefined): MovementKind {
  if (!a) return "addition";
  if (!b) return "deletion";
  const sa = statusOf(a.status);
  const sb = statusOf(b.status);
  if (!isTerminated(sa) && isTerminated(sb)) return "termination";
  if (isTerminated(sa) && !isTerminated(sb)) return "reinstatement";
  return "change";
}

/**
 * Compute the figures and hand each eligibility event to `onEvent`, ordered by member and coverage.
 * Reads inside the caller's transaction.
 */
export function membershipFigures(scope: ReportScope, onEvent: (row: EligibilityRow) => void): MembershipFigures {
  const { db } = scope;
  const p = params(scope);
  const cells = new Map<string, MembershipCell>();
  const cell = (c: { groupPolicyId: unknown; groupId: unknown; planId: unknown; status: unknown }): MembershipCell => {
    const k = cellKey(c);
    let x = cells.get(k);
    if (!x) {
      x = { groupPolicyId: s(c.groupPolicyId), groupId: s(c.groupId), planId: s(c.planId), status: statusOf(c.status), from: 0, added: 0, deleted: 0, movedIn: 0, movedOut: 0, to: 0, holds: true };
      cells.set(k, x);
    }
    return x;
  };
  // The counts, by one scan of the versions current at A or at B.
  const counted = db
    .prepare(
      `SELECT groupPolicyId, groupId, planId, status,
              SUM(${asOf("v", ":a")}) AS at_a, SUM(${asOf("v", ":b")}) AS at_b
       FROM _coverages_v v
       WHERE v.valid_from_run <= max(:a, :b) AND (v.valid_to_run IS NULL OR v.valid_to_run > min(:a, :b))
       GROUP BY 1, 2, 3, 4`,
    )
    .all(p) as { groupPolicyId: unknown; groupId: unknown; planId: unknown; status: unknown; at_a: number; at_b: number }[];
  for (const r of counted) {
    const c = cell(r);
    c.from += r.at_a;
    c.to += r.at_b;
  }
  const members = db
    .prepare(`SELECT COALESCE(SUM(${asOf("v", ":a")}), 0) AS at_a, COALESCE(SUM(${asOf("v", ":b")}), 0) AS at_b FROM _members_v v WHERE v.valid_from_run <= max(:a, :b) AND (v.valid_to_run IS NULL OR v.valid_to_run > min(:a, :b))`)
    .get(p) as { at_a: number; at_b: number };

  // The members that moved: added and deleted counts, and what changed in the ones kept.
  const memberMoves = createMoves(scope, "members");
  const memberChanges = new Map<string, string[]>();
  let membersAdded = 0;
  let membersDeleted = 0;
  for (const r of db
    .prepare(`SELECT m.id, x.data AS a_data, y.data AS b_data FROM ${memberMoves} m LEFT JOIN _members_d x ON x.vid = m.a_vid LEFT JOIN _members_d y ON y.vid = m.b_vid`)
    .iterate() as Iterable<{ id: string; a_data: string | null; b_data: string | null }>) {
    if (r.a_data === null) membersAdded++;
    else if (r.b_data === null) membersDeleted++;
    else memberChanges.set(r.id, changedFields(JSON.parse(r.a_data), JSON.parse(r.b_data)).map((f) => `member.${f}`));
  }

  // The coverages that moved, each classified; the events sorted by member and coverage.
  const coverageMoves = createMoves(scope, "coverages");
  const movement = Object.fromEntries(MovementKinds.map((k) => [k, 0])) as Record<MovementKind, number>;
  const statusChanges = new Map<string, { from: string; to: string; count: number }>();
  const events: EligibilityRow[] = [];
  const observedDate = (run: number | null): string => (run === null ? scope.to.date : (scope.runDates.get(run) ?? scope.to.date));
  const covCols = ["memberId", "groupId", "groupPolicyId", "planId", "status", "startDate", "endDate", "data"] as const;
  const personCols = ["subscriberId", "relationship", "lastName", "firstName", "dateOfBirth"] as const;
  // Columns of one side of a join selected as `<pfx>_<column>`, and read back by `pick`.
  // (A version's JSON is kept beside its row, by vid: analyst-schema.ts.)
  const prefixed = (pfx: string, cols: readonly string[]) =>
    cols.map((c) => (c === "data" ? `(SELECT d.data FROM _coverages_d d WHERE d.vid = ${pfx}.vid) AS ${pfx}_data` : `${pfx}."${c}" AS ${pfx}_${c}`)).join(", ");
  const pick = (r: Record<string, unknown>, pfx: string, cols: readonly string[]): Record<string, unknown> => Object.fromEntries(cols.map((c) => [c, r[`${pfx}_${c}`]]));
  const rows = db.prepare(
    `SELECT m.id, m.observed_run, ${prefixed("x", covCols)}, ${prefixed("y", covCols)}, ${prefixed("ma", personCols)}, ${prefixed("mb", personCols)}, ma.vid AS ma_vid, mb.vid AS mb_vid
     FROM ${coverageMoves} m
     LEFT JOIN _coverages_v x ON x.vid = m.a_vid
     LEFT JOIN _coverages_v y ON y.vid = m.b_vid
     LEFT JOIN _members_v ma ON ma.id = x.memberId AND ${asOf("ma", ":a")}
     LEFT JOIN _members_v mb ON mb.id = y.memberId AND ${asOf("mb", ":b")}`,
  );
  const eventsOfCoverage = new Set<string>();
  for (const r of rows.iterate(p) as Iterable<Record<string, unknown>>) {
    const a = r.x_data === null ? undefined : (pick(r, "x", covCols) as unknown as CovSide);
    const b = r.y_data === null ? undefined : (pick(r, "y", covCols) as unknown as CovSide);
    const kind = classify(a, b);
    movement[kind]++;
    if (a && b) {
      if (cellKey(a) !== cellKey(b)) {
        cell(a).movedOut++;
        cell(b).movedIn++;
      }
      if (statusOf(a.status) !== statusOf(b.status)) {
        const k = `${statusOf(a.status)}\u0000${statusOf(b.status)}`;
        const sc = statusChanges.get(k) ?? { from: statusOf(a.status), to: statusOf(b.status), count: 0 };
        sc.count++;
        statusChanges.set(k, sc);
      }
    } else if (b) cell(b).added++;
    else if (a) cell(a).deleted++;
    const cov = (b ?? a)!;
    const who = (r.mb_vid !== null ? pick(r, "mb", personCols) : r.ma_vid !== null ? pick(r, "ma", personCols) : {}) as Partial<MemberSide>;
    const fields = a && b ? changedFields(JSON.parse(a.data), JSON.parse(b.data)) : [];
    const memberId = s(cov.memberId);
    fields.push(...(memberChanges.get(memberId) ?? []));
    const observed = r.observed_run as number | null;
    const effective =
      kind === "addition" || kind === "reinstatement" ? s(b?.startDate) : kind === "termination" ? s(b?.endDate) || observedDate(observed) : kind === "deletion" ? s(a?.endDate) || observedDate(observed) : observedDate(observed);
    eventsOfCoverage.add(String(r.id));
    events.push(eventRow(MaintenanceCode[kind], kind, kind === "deletion" ? "deleted at the service" : "", effective, memberId, who, String(r.id), cov, a, b, fields, observed));
  }
  // Members whose own record changed: a change (001) on each coverage they hold at both ends.
  if (memberChanges.size > 0) {
    const held = db.prepare(
      `SELECT c.id, c.memberId, c.groupId, c.groupPolicyId, c.planId, c.status, c.startDate, c.endDate, ${prefixed("mb", personCols)}, mm.observed_run
       FROM ${memberMoves} mm
       JOIN _coverages_v c ON c.memberId = mm.id AND ${asOf("c", ":b")}
       JOIN _members_v mb ON mb.vid = mm.b_vid
       WHERE mm.a_vid IS NOT NULL AND mm.b_vid IS NOT NULL AND EXISTS (SELECT 1 FROM _coverages_v ca WHERE ca.id = c.id AND ${asOf("ca", ":a")})`,
    );
    for (const r of held.iterate(p) as Iterable<Record<string, unknown>>) {
      if (eventsOfCoverage.has(String(r.id))) continue;
      const cov = r as unknown as CovSide;
      const who = pick(r, "mb", personCols) as Partial<MemberSide>;
      const observed = r.observed_run as number | null;
      events.push(eventRow("001", "change", "member record", observedDate(observed), String(r.memberId), who, String(r.id), cov, cov, cov, memberChanges.get(String(r.memberId)) ?? [], observed));
      movement.change++;
    }
  }
  events.sort((x, y) => cmp(x.member_id, y.member_id) || cmp(x.coverage_id, y.coverage_id));
  for (const e of events) onEvent(e);

  const list = [...cells.values()].filter((c) => c.from + c.to + c.added + c.deleted + c.movedIn + c.movedOut > 0);
  for (const c of list) c.holds = c.from + c.added - c.deleted + c.movedIn - c.movedOut === c.to;
  list.sort((x, y) => cmp(x.groupId, y.groupId) || cmp(x.groupPolicyId, y.groupPolicyId) || cmp(x.planId, y.planId) || cmp(x.status, y.status));
  const byStatus = new Map<string, { status: string; from: number; to: number }>();
  for (const c of list) {
    const b = byStatus.get(c.status) ?? { status: c.status, from: 0, to: 0 };
    b.from += c.from;
    b.to += c.to;
    byStatus.set(c.status, b);
  }
  const m = { from: members.at_a, to: members.at_b, added: membersAdded, deleted: membersDeleted, changed: memberChanges.size, holds: members.at_a + membersAdded - membersDeleted === members.at_b };
  return {
    members: m,
    byStatus: [...byStatus.values()].sort((x, y) => cmp(x.status, y.status)),
    cells: list,
    movement,
    statusChanges: [...statusChanges.values()].sort((x, y) => cmp(x.from, y.from) || cmp(x.to, y.to)),
    holds: m.holds && list.every((c) => c.holds),
  };
}


function eventRow(
  code: string,
  kind: string,
  reason: string,
  effective: string,
  memberId: string,
  who: Partial<MemberSide>,
  coverageId: string,
  cov: CovSide,
  a: CovSide | undefined,
  b: CovSide | undefined,
  fields: string[],
  observed: number | null,
): EligibilityRow {
  return {
    maintenance_type: code,
    maintenance: kind,
    reason,
    effective_date: effective,
    member_id: memberId,
    subscriber_id: s(who.subscriberId),
    relationship: s(who.relationship),
    last_name: s(who.lastName),
    first_name: s(who.firstName),
    date_of_birth: s(who.dateOfBirth),
    coverage_id: coverageId,
    group_id: s(cov.groupId),
    group_policy_id: s(cov.groupPolicyId),
    plan_id: s(cov.planId),
    status_from: a ? s(a.status) : "",
    status_to: b ? s(b.status) : "",
    start_date: s(cov.startDate),
    end_date: s(cov.endDate),
    changed_fields: fields.join(" "),
    observed_run: observed === null ? "" : String(observed),
  };
}

/** The 030 audit: every coverage as of B with its member, by coverage id. Streams. */
export function auditRows(scope: ReportScope, onRow: (row: EligibilityRow) => void): number {
  const stmt = scope.db.prepare(
    `SELECT c.id, c.memberId, c.groupId, c.groupPolicyId, c.planId, c.status, c.startDate, c.endDate,
            m.subscriberId, m.relationship, m.lastName, m.firstName, m.dateOfBirth
     FROM _coverages_v c
     LEFT JOIN _members_v m ON m.id = c.memberId AND ${asOf("m", ":b")}
     WHERE ${asOf("c", ":b")}
     ORDER BY +c.id`,
  );
  let n = 0;
  for (const r of stmt.iterate(params(scope)) as Iterable<Record<string, unknown>>) {
    const cov = r as unknown as CovSide;
    onRow(eventRow("030", "audit", "", s(cov.startDate), s(cov.memberId), r as Partial<MemberSide>, String(r.id), cov, undefined, cov, [], null));
    n++;
  }
  return n;
}

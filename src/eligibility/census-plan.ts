/**
 * What a census file asks of the service, against a view of the group: people to add, coverages to
 * end, demographics to correct, and every row that cannot be carried out with its reason. Pure: the
 * same file and view give the same plan, so `plan` and `apply` can only differ by their view.
 */
import type { PatchMemberBody } from "../../schemas/writes.js";
import { cellShape } from "./cell-text.js";
import { MemberIndex, sameText } from "./census-match.js";
import type { GroupMember, GroupView } from "./group-people.js";
import type { Census, CensusRow, RowProblem } from "./read-census.js";

/** The spec's rule 4, word for word in substance: the one reason a plan change is refused. */
export const PLAN_CHANGE_REFUSAL =
  "a member changing plans cannot be done through the API: only plan changes started by the service operator are supported; notify the service operator";

/** New people are named by their line (an employee_id is often an SSN, never shown). */
export interface NewSubscriber { readonly line: number; readonly plan: string; readonly dependents: readonly number[] }
export interface NewDependent { readonly line: number; readonly plan: string; readonly subscriberMemberId: string; readonly subscriberCoverageId: string }
export interface Termination { readonly line: number; readonly memberId: string; readonly coverageId: string; readonly terminationDate: string; readonly currentEndDate: string | null }
export interface DemographicUpdate { readonly line: number; readonly memberId: string; readonly fields: readonly string[]; readonly body: PatchMemberBody }
export interface RowNote { readonly line: number; readonly memberId?: string; readonly reason: string }

export interface CensusPlan {
  readonly groupPolicyId: string;
  readonly groupNumber: string | null;
  readonly addSubscribers: readonly NewSubscriber[];
  readonly addDependents: readonly NewDependent[];
  readonly terminations: readonly Termination[];
  readonly updates: readonly DemographicUpdate[];
  readonly refused: readonly RowNote[];
  readonly unmatched: readonly RowNote[];
  readonly problems: readonly RowProblem[];
  /** Rows of members that need nothing. */
  readonly unchanged: number;
  /** Members of the group no row names (left alone). */
  readonly membersNotInFile: number;
}

/** Whether the plan sends anything. */
export const planSends = (p: CensusPlan): boolean => p.addSubscribers.length + p.addDependents.length + p.terminations.length + p.updates.length > 0;

/**
 * Plan the census against the group.
 *
 * @example const plan = planCensus(readCensus(text, file, key), readSnapshotGroup(db, "G-1001"));
 */
export function planCensus(census: Census, view: GroupView): CensusPlan {
  const index = new MemberIndex(view.members);
  const addSubscribers: NewSubscriber[] = [];
  const addDependents: NewDependent[] = [];
  const terminations: Termination[] = [];
  const updates: DemographicUpdate[] = [];
  const refused: RowNote[] = [];
  const unmatched: RowNote[] = [];
  const named = new Set<string>();
  let unchanged = 0;

  const planOf = (row: CensusRow): string | { reason: string } => {
    if (row.plan_id) return view.plans.includes(row.plan_id) ? row.plan_id : { reason: `its plan_id (${cellShape(row.plan_id)}) is not a plan of the group (its plans: ${view.plans.join(", ") || "none"})` };
    if (view.plans.length === 1) return view.plans[0]!;
    return { reason: `the group has ${view.plans.length} plans (${view.plans.join(", ")}): give plan_id` };
  };

  // Subscribers first: a dependent's fate depends on its subscriber's. Two passes over the rows in
  // file order, each row an object only while it is planned (never all of them at once).
  const subscriberOf = new Map<string, { entry?: NewSubscriber & { dependents: number[] }; member?: GroupMember; failedLine?: number }>();
  const ordered = function* () {
    for (const row of census.rows) if (row.relationship === "self") yield row;
    for (const row of census.rows) if (row.relationship !== "self") yield row;
  };
  for (const row of ordered()) {
    const found = index.match(row);
    if (found.kind === "unmatched") {
      unmatched.push({ line: row.line, reason: found.reason });
      if (row.relationship === "self") subscriberOf.set(row.employee_id, { failedLine: row.line });
      continue;
    }
    if (found.kind === "member") {
      named.add(found.member.memberId);
      if (row.relationship === "self") subscriberOf.set(row.employee_id, { member: found.member });
      const before = terminations.length + updates.length + refused.length;
      planMember(row, view.plans, found.member, found.sameName, { terminations, updates, refused });
      if (terminations.length + updates.length + refused.length === before) unchanged++;
      continue;
    }
    // A new person.
    if (row.coverage_end) {
      unmatched.push({ line: row.line, reason: "coverage_end is given, but the person is not a member of the group: nothing to terminate (add them without it first)" });
      if (row.relationship === "self") subscriberOf.set(row.employee_id, { failedLine: row.line });
      continue;
    }
    if (row.relationship === "self") {
      const plan = planOf(row);
      if (typeof plan !== "string") {
        unmatched.push({ line: row.line, reason: plan.reason });
        subscriberOf.set(row.employee_id, { failedLine: row.line });
        continue;
      }
      const entry = { line: row.line, plan, dependents: [] as number[] };
      addSubscribers.push(entry);
      subscriberOf.set(row.employee_id, { entry });
      continue;
    }
    const sub = subscriberOf.get(row.employee_id);
    if (sub?.entry) {
      if (row.plan_id && row.plan_id !== sub.entry.plan) unmatched.push({ line: row.line, reason: `a dependent joins its subscriber's plan (${sub.entry.plan}, line ${sub.entry.line}), not ${rowPlan(row.plan_id, view.plans)}` });
      else sub.entry.dependents.push(row.line);
    } else if (sub?.member) {
      const scid = sub.member.coverage.subscriberCoverageId ?? sub.member.coverage.id;
      const subPlan = sub.member.coverage.planId;
      if (subPlan === null) unmatched.push({ line: row.line, reason: `its subscriber's coverage (member ${sub.member.memberId}) names no plan` });
      else if (row.plan_id && row.plan_id !== subPlan) unmatched.push({ line: row.line, reason: `a dependent joins its subscriber's plan (${subPlan}), not ${rowPlan(row.plan_id, view.plans)}` });
      else addDependents.push({ line: row.line, plan: subPlan, subscriberMemberId: sub.member.memberId, subscriberCoverageId: scid });
    } else {
      unmatched.push({ line: row.line, reason: `its subscriber's row (line ${sub?.failedLine ?? "?"}) cannot be carried out, so the dependent cannot be added` });
    }
  }
  const byLine = <T extends { line: number }>(xs: T[]) => xs.sort((a, b) => a.line - b.line);
  return {
    groupPolicyId: view.groupPolicyId,
    groupNumber: view.groupNumber,
    addSubscribers: byLine(addSubscribers),
    addDependents: byLine(addDependents),
    terminations: byLine(terminations),
    updates: byLine(updates),
    refused: byLine(refused),
    unmatched: byLine(unmatched),
    problems: census.problems,
    unchanged,
    membersNotInFile: view.members.filter((m) => !named.has(m.memberId)).length,
  };
}

/**
 * A row's plan_id in a reason: named when it is one of the group's plans (that text comes from the
 * service, not the file), otherwise only by its shape.
 */
function rowPlan(planId: string, plans: readonly string[]): string {
  return plans.includes(planId) ? planId : `the row's plan_id (${cellShape(planId)})`;
}

/** A matched row: a refused plan change, a termination, demographic updates. */
function planMember(row: CensusRow, plans: readonly string[], m: GroupMember, sameName: boolean, out: { terminations: Termination[]; updates: DemographicUpdate[]; refused: RowNote[] }): void {
  if (row.plan_id && m.coverage.planId !== null && row.plan_id !== m.coverage.planId)
    out.refused.push({ line: row.line, memberId: m.memberId, reason: `plan ${m.coverage.planId} to ${rowPlan(row.plan_id, plans)}: ${PLAN_CHANGE_REFUSAL}` });
  if (row.coverage_end && row.coverage_end !== m.coverage.endDate)
    out.terminations.push({ line: row.line, memberId: m.memberId, coverageId: m.coverage.id, terminationDate: row.coverage_end, currentEndDate: m.coverage.endDate });
  const body: Record<string, unknown> = {};
  const fields: string[] = [];
  const set = (field: string, value: unknown) => ((body[field] = value), fields.push(field));
  if (row.first_name !== m.firstName?.trim()) set("firstName", row.first_name);
  if (row.last_name !== m.lastName?.trim()) set("lastName", row.last_name);
  // Matched by SSN and name: the date of birth in the file corrects the service's.
  if (sameName && row.date_of_birth !== m.dateOfBirth) set("dateOfBirth", row.date_of_birth);
  if (row.gender !== undefined && row.gender !== m.gender) set("gender", row.gender);
  if (row.email !== undefined && !sameText(row.email, m.email)) set("email", row.email);
  if (row.phone !== undefined && row.phone.replace(/\D/g, "") !== (m.phone ?? "").replace(/\D/g, "")) set("phone", row.phone);
  const address = { line1: row.address_line1, line2: row.address_line2, city: row.city, state: row.state, zip: row.zip };
  const given = Object.entries(address).filter(([, v]) => v !== undefined) as [keyof typeof address, string][];
  if (given.some(([k, v]) => (k === "state" ? !sameText(v, m.address[k]) : v !== m.address[k]))) {
    body.address = Object.fromEntries(given);
    fields.push(...given.map(([k]) => `address.${k}`));
  }
  if (fields.length > 0) out.updates.push({ line: row.line, memberId: m.memberId, fields, body: body as PatchMemberBody });
}

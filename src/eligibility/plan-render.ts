/**
 * A census plan as people read it and as scripts read it (`--json`). Both name people by file
 * line and the service's ids only: no SSN, no employee_id, no cell of the file (cell-text.ts), and
 * no demographic value (an update lists the fields it changes).
 */
import type { CensusPlan } from "./census-plan.js";

/** The plan as one JSON-ready object; `updates` carry their field names, not their values. */
export function planJson(plan: CensusPlan): Record<string, unknown> {
  return {
    group: { groupPolicyId: plan.groupPolicyId, groupNumber: plan.groupNumber },
    addSubscribers: plan.addSubscribers,
    addDependents: plan.addDependents,
    terminations: plan.terminations,
    updates: plan.updates.map(({ line, memberId, fields }) => ({ line, memberId, fields })),
    refused: plan.refused,
    unmatched: plan.unmatched,
    problems: plan.problems,
    unchanged: plan.unchanged,
    membersNotInFile: plan.membersNotInFile,
  };
}

/**
 * The plan as text, one section per kind, each row by its line.
 *
 * @example process.stdout.write(planText(plan, "census.csv"))
 */
export function planText(plan: CensusPlan, file: string): string {
  const out: string[] = [`Census plan for group ${plan.groupNumber ?? "?"} (policy ${plan.groupPolicyId}), file ${file}:`];
  const section = <T>(title: string, items: readonly T[], line: (x: T) => string) => {
    out.push(`  ${title}: ${items.length}`);
    for (const x of items) out.push(`    ${line(x)}`);
  };
  section("subscribers to add", plan.addSubscribers, (s) => `line ${s.line}, plan ${s.plan}${s.dependents.length ? `, with the dependents on line ${s.dependents.join(", ")}` : ""}`);
  section("dependents to add to existing subscribers", plan.addDependents, (d) => `line ${d.line}: to member ${d.subscriberMemberId} (subscriber coverage ${d.subscriberCoverageId}), plan ${d.plan}`);
  section("coverages to terminate", plan.terminations, (t) => `line ${t.line}: member ${t.memberId}, coverage ${t.coverageId}, on ${t.terminationDate}${t.currentEndDate ? ` (now ends ${t.currentEndDate})` : ""}`);
  section("demographic updates", plan.updates, (u) => `line ${u.line}: member ${u.memberId}: ${u.fields.join(", ")}`);
  section("refused", plan.refused, (r) => `line ${r.line}: member ${r.memberId ?? "?"}: ${r.reason}`);
  section("rows that cannot be matched (skipped)", plan.unmatched, (u) => `line ${u.line}: ${u.reason}`);
  section("rows with problems (census apply refuses the file until they are fixed)", plan.problems, (p) => `line ${p.line}, ${p.field}: ${p.message}`);
  out.push(`  unchanged: ${plan.unchanged} row(s); members of the group not in the file: ${plan.membersNotInFile} (left alone)`);
  return `${out.join("\n")}\n`;
}

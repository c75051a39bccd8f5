/**
 * The findings by group, for the page and the summary: a manager works group by group (a group is
 * an employer to call), so each group gets its count per check, and the ids behind each count in a
 * list folded by default (<details>: no script). Every finding is in findings.csv; the page lists
 * at most `IdsPerList` ids per group and check, so that a large snapshot still gives a page a
 * browser opens.
 */
import { CheckNames, CheckTitles, type CheckName } from "./check-names.js";
import type { Finding } from "./checks.js";
import { groupLabel } from "./group-names.js";
import { escapeXml as esc } from "./svg-chart.js";

export const IdsPerList = 200;

export interface FindingGroup {
  groupId: string;
  total: number;
  checks: { check: CheckName; count: number; ids: string[] }[];
}

/** Collects findings as the checks emit them; `groups()` gives the largest group first. */
export class FindingsByGroup {
  private readonly byGroup = new Map<string, Map<CheckName, { count: number; ids: string[] }>>();

  add(f: Finding): void {
    let checks = this.byGroup.get(f.group_id);
    if (!checks) this.byGroup.set(f.group_id, (checks = new Map()));
    let c = checks.get(f.check);
    if (!c) checks.set(f.check, (c = { count: 0, ids: [] }));
    c.count++;
    if (c.ids.length < IdsPerList) c.ids.push(f.record_id);
  }

  groups(): FindingGroup[] {
    const out = [...this.byGroup].map(([groupId, checks]) => {
      const list = CheckNames.filter((c) => checks.has(c)).map((c) => ({ check: c, ...checks.get(c)! }));
      return { groupId, total: list.reduce((t, c) => t + c.count, 0), checks: list };
    });
    return out.sort((x, y) => y.total - x.total || (x.groupId < y.groupId ? -1 : x.groupId > y.groupId ? 1 : 0));
  }
}

const n = (x: number): string => x.toLocaleString("en-US");
const plural = (x: number, one: string): string => `${n(x)} ${one}${x === 1 ? "" : "s"}`;

/** One section per group: its name, its count, and per check a folded list of the record ids. */
export function findingGroupsHtml(groups: readonly FindingGroup[], names: ReadonlyMap<string, string>): string {
  if (!groups.length) return "<p>No findings.</p>";
  const H: string[] = [];
  for (const g of groups) {
    H.push(`<section class="group-findings" data-group="${esc(g.groupId)}"><h3>Group ${esc(groupLabel(names, g.groupId))} <span class="count">${plural(g.total, "finding")}</span></h3>`);
    for (const c of g.checks) {
      const more = c.count - c.ids.length;
      H.push(
        `<details data-check="${c.check}"><summary>${esc(CheckTitles[c.check])}: <b>${n(c.count)}</b></summary><p class="ids">` +
          c.ids.map((id) => `<code class="record">${esc(id)}</code>`).join(" ") +
          (more > 0 ? ` … and ${n(more)} more in findings.csv` : "") +
          "</p></details>",
      );
    }
    H.push("</section>");
  }
  return H.join("\n");
}

/** The summary's table: one row per group, its name, its count and the count per check. */
export function findingGroupsMarkdown(groups: readonly FindingGroup[], names: ReadonlyMap<string, string>): string[] {
  if (!groups.length) return ["No findings.", ""];
  const cell = (s: string): string => s.replace(/\|/g, "\\|");
  return [
    "| group | findings | by check |",
    "|---|---|---|",
    ...groups.map((g) => `| ${cell(groupLabel(names, g.groupId))} | ${n(g.total)} | ${g.checks.map((c) => `${c.check}: ${n(c.count)}`).join(", ")} |`),
    "",
    "The ids are listed in report.html (per group and check) and in findings.csv.",
    "",
  ];
}

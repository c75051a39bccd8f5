/**
 * The reconciliation report for people: a Markdown summary and one self-contained HTML page
 * (inline CSS and SVG, no script, nothing fetched). Both show the same figures as report.json, the
 * arithmetic the report checked, and the findings by group; the CSV files hold all rows. They speak
 * to a benefits operations manager: periods by their business dates (run ids in small print), money
 * and counts with thousands separators, groups by number and name. Neither names a member: ids only.
 */
import type { ManifestFile } from "../sinks/files/manifest.js";
import { CheckNames, CheckTitles } from "./check-names.js";
import { findingGroupsHtml, findingGroupsMarkdown } from "./findings-by-group.js";
import { groupLabel } from "./group-names.js";
import { MovementKinds, MaintenanceCode } from "./membership.js";
import type { ReconcileReport } from "./reconcile-report.js";
import { moneyText as $ } from "./money.js";
import { barChart, escapeXml as esc } from "./svg-chart.js";

const n = (x: number): string => x.toLocaleString("en-US");
const signed = (x: number): string => (x > 0 ? `+${n(x)}` : x < 0 ? `−${n(-x)}` : "0");
type Period = ReconcileReport["from"];
/** The run behind a period, the small print beside its date. */
const runOf = (p: Period): string => `run ${p.runId} (${p.job}, started ${p.startedAt})`;
const periodHtml = (p: Period, id: string, label: string): string => `<span id="${id}"><b>${label}</b>: ${esc(p.date)} <small>${esc(runOf(p))}</small></span>`;
const Label: Record<(typeof MovementKinds)[number], string> = {
  addition: "Additions",
  termination: "Terminations",
  reinstatement: "Reinstatements",
  change: "Changes",
  deletion: "Deletions",
};

/** Plain-language lines of the arithmetic the report checked. */
export function arithmeticLines(r: ReconcileReport): { text: string; holds: boolean }[] {
  const m = r.members;
  const out = [
    { text: `members: ${n(m.from)} at A + ${n(m.added)} added − ${n(m.deleted)} deleted = ${n(m.from + m.added - m.deleted)}; at B: ${n(m.to)}`, holds: m.holds },
  ];
  const bad = r.coverages.cells.filter((c) => !c.holds);
  out.push({
    text: `coverages: in each of ${n(r.coverages.cells.length)} (group, plan, status) cells, at A + added − deleted + moved in − moved out = at B${bad.length ? `; ${bad.length} cell(s) do not: ${bad.slice(0, 5).map((c) => `group ${groupLabel(r.groupNames, c.groupId)} plan ${c.planId} ${c.status} (${c.from} + ${c.added} − ${c.deleted} + ${c.movedIn} − ${c.movedOut} ≠ ${c.to})`).join("; ")}` : ""}`,
    holds: bad.length === 0,
  });
  for (const a of r.claims.arithmetic) out.push({ text: `claims ${a.status}: at A − what left + what came = at B, in count and in billed, allowed and paid`, holds: a.holds });
  out.push({
    text: `claims paid total: ${$(r.claims.from.paid)} at A + ${$(r.claims.paidMovement.total)} moved = ${$(r.claims.to.paid)} at B`,
    holds: r.claims.holds,
  });
  return out;
}

export function renderMarkdown(r: ReconcileReport, files: readonly ManifestFile[]): string {
  const L: string[] = [];
  const table = (head: string[], rows: string[][]): void => {
    L.push(`| ${head.join(" | ")} |`, `|${head.map(() => "---").join("|")}|`, ...rows.map((x) => `| ${x.map((c) => c.replace(/\|/g, "\\|")).join(" | ")} |`), "");
  };
  L.push(`# Reconciliation: ${r.from.date} → ${r.to.date}`, "");
  L.push(`- **A**: ${r.from.date} (${runOf(r.from)})`, `- **B**: ${r.to.date} (${runOf(r.to)})`, `- Groups count as terminated when their plan year ended before ${r.asOfDate}.`, "");
  L.push(r.arithmeticHolds ? "**The arithmetic holds.**" : "**THE ARITHMETIC DOES NOT HOLD: the snapshot's history is inconsistent. See below.**", "");
  for (const a of arithmeticLines(r)) L.push(`- ${a.holds ? "✓" : "✗ DOES NOT HOLD:"} ${a.text}`);
  L.push("", "## Membership", "");
  table(["", "A", "B", "change"], [["members", n(r.members.from), n(r.members.to), signed(r.members.to - r.members.from)], ...r.coverages.byStatus.map((s) => [`coverages ${s.status}`, n(s.from), n(s.to), signed(s.to - s.from)])]);
  L.push("### Movement (enrollment maintenance, ANSI X12 834 codes)", "");
  table(["movement", "code", "coverages"], MovementKinds.map((k) => [Label[k], MaintenanceCode[k], n(r.coverages.movement[k])]));
  L.push(`Members added ${n(r.members.added)}, deleted ${n(r.members.deleted)}, with a changed record ${n(r.members.changed)}.`, "");
  if (r.coverages.statusChanges.length) table(["status at A", "status at B", "coverages"], r.coverages.statusChanges.map((s) => [s.from, s.to, n(s.count)]));
  L.push(`Eligibility change file: ${n(r.eligibility.changes)} rows; audit (030) of coverage as of B: ${n(r.eligibility.audit)} rows.`, "");
  L.push("## Claims", "");
  table(
    ["status", "count A", "paid A", "count B", "paid B"],
    [...r.claims.byStatus.map((s) => [s.status, n(s.from.count), $(s.from.paid), n(s.to.count), $(s.to.paid)]), ["**all**", n(r.claims.from.count), $(r.claims.from.paid), n(r.claims.to.count), $(r.claims.to.paid)]],
  );
  L.push(`Billed: ${$(r.claims.from.billed)} at A, ${$(r.claims.to.billed)} at B. Allowed: ${$(r.claims.from.allowed)} at A, ${$(r.claims.to.allowed)} at B.`, "");
  if (r.claims.transitions.length) table(["status at A", "status at B", "claims", "paid change"], r.claims.transitions.map((t) => [t.from, t.to, n(t.count), $(t.paidChange)]));
  const pm = r.claims.paidMovement;
  L.push(`Paid movement: ${$(pm.newClaims)} from new claims, ${$(pm.removedClaims)} from removed claims, ${$(pm.changedClaims)} from claims present at both; ${$(pm.total)} in all.`, "");
  L.push("## Consistency checks (as of B)", "");
  table(["check", "findings"], CheckNames.map((c) => [CheckTitles[c], n(r.findings[c])]));
  L.push("### By group", "", ...findingGroupsMarkdown(r.findingsByGroup, r.groupNames));
  for (const c of CheckNames) {
    const ex = r.examples[c];
    if (!ex.length) continue;
    L.push(`### ${CheckTitles[c]}`, "");
    for (const f of ex) L.push(`- \`${f.record_id}\` (member \`${f.member_id}\`): ${f.detail}`);
    if (r.findings[c] > ex.length) L.push(`- … and ${n(r.findings[c] - ex.length)} more in findings.csv`);
    L.push("");
  }
  L.push("## Files", "");
  for (const f of files) L.push(`- \`${f.file}\`: ${n(f.rows)} rows`);
  L.push("- `summary.md`, `report.html`, `report.json`, `manifest.json` (each file's rows and SHA-256)", "");
  return L.join("\n");
}

const CSS = `
body{font:14px/1.45 system-ui,-apple-system,"Segoe UI",sans-serif;margin:2rem auto;max-width:980px;color:#1d2733;padding:0 1rem}
h1{font-size:1.5rem}h2{font-size:1.2rem;margin-top:2rem;border-bottom:1px solid #d5dbe1;padding-bottom:.2rem}h3{font-size:1rem}
table{border-collapse:collapse;margin:.5rem 0 1rem}th,td{border:1px solid #d5dbe1;padding:.25rem .6rem;text-align:right}
th:first-child,td:first-child{text-align:left}thead th{background:#eef2f6}
.ok{color:#17663a}.bad{color:#a8071a;font-weight:600}.banner{padding:.6rem 1rem;border-radius:4px;margin:1rem 0}
.banner.ok{background:#e6f4ea}.banner.bad{background:#fdecea}
code{font-size:12px}.chart{display:block;margin:1rem 0;max-width:100%;height:auto}small{color:#5b6875}
h1 small{font-size:.75rem;font-weight:400}.count{font-weight:400;color:#5b6875}
details{margin:.2rem 0 .2rem 1rem}summary{cursor:pointer}.ids{overflow-wrap:anywhere;margin:.3rem 0 .6rem 1rem}
.chart-title{font-weight:600;font-size:14px}.chart-label,.chart-value{font-size:12px;fill:#1d2733}
`;

export function renderHtml(r: ReconcileReport, files: readonly ManifestFile[]): string {
  const H: string[] = [];
  const table = (head: string[], rows: string[][]): void => {
    H.push(`<table><thead><tr>${head.map((h) => `<th>${esc(h)}</th>`).join("")}</tr></thead><tbody>`);
    for (const row of rows) H.push(`<tr>${row.map((c) => `<td>${esc(c)}</td>`).join("")}</tr>`);
    H.push("</tbody></table>");
  };
  const statuses = r.coverages.byStatus;
  H.push(`<h1>Reconciliation: ${esc(r.from.date)} <small>run ${r.from.runId}</small> → ${esc(r.to.date)} <small>run ${r.to.runId}</small></h1>`);
  H.push(`<p>${periodHtml(r.from, "period-a", "A")}<br>${periodHtml(r.to, "period-b", "B")}<br>Groups count as terminated when their plan year ended before ${esc(r.asOfDate)}.</p>`);
  H.push(
    r.arithmeticHolds
      ? `<div class="banner ok" id="arithmetic">The arithmetic holds.</div>`
      : `<div class="banner bad" id="arithmetic">THE ARITHMETIC DOES NOT HOLD: the snapshot's history is inconsistent.</div>`,
  );
  H.push("<ul>");
  for (const a of arithmeticLines(r)) H.push(`<li class="${a.holds ? "ok" : "bad"}">${a.holds ? "✓" : "✗ does not hold:"} ${esc(a.text)}</li>`);
  H.push("</ul>");
  H.push("<h2>Membership</h2>");
  H.push(
    barChart(
      "chart-membership",
      "Coverages by status, A and B",
      statuses.map((s) => s.status),
      [
        { name: `A, ${r.from.date} (run ${r.from.runId})`, values: statuses.map((s) => s.from), color: "#8da9c4" },
        { name: `B, ${r.to.date} (run ${r.to.runId})`, values: statuses.map((s) => s.to), color: "#134074" },
      ],
    ),
  );
  table(["", "A", "B", "change"], [["members", n(r.members.from), n(r.members.to), signed(r.members.to - r.members.from)], ...statuses.map((s) => [`coverages ${s.status}`, n(s.from), n(s.to), signed(s.to - s.from)])]);
  H.push(barChart("chart-movement", "Movement between A and B (coverages)", MovementKinds.map((k) => `${Label[k]} (${MaintenanceCode[k]})`), [{ name: "coverages", values: MovementKinds.map((k) => r.coverages.movement[k]), color: "#e07a5f" }]));
  H.push(`<p>Members added ${n(r.members.added)}, deleted ${n(r.members.deleted)}, with a changed record ${n(r.members.changed)}. Eligibility change file: ${n(r.eligibility.changes)} rows; audit (030): ${n(r.eligibility.audit)} rows.</p>`);
  if (r.coverages.statusChanges.length) table(["status at A", "status at B", "coverages"], r.coverages.statusChanges.map((s) => [s.from, s.to, n(s.count)]));
  H.push("<h2>Claims</h2>");
  const cs = r.claims.byStatus;
  H.push(
    barChart(
      "chart-claims",
      "Claims by status, A and B",
      cs.map((s) => s.status),
      [
        { name: `A, ${r.from.date} (run ${r.from.runId})`, values: cs.map((s) => s.from.count), color: "#a3b18a" },
        { name: `B, ${r.to.date} (run ${r.to.runId})`, values: cs.map((s) => s.to.count), color: "#3a5a40" },
      ],
    ),
  );
  table(
    ["status", "count A", "billed A", "paid A", "count B", "billed B", "paid B"],
    [...cs.map((s) => [s.status, n(s.from.count), $(s.from.billed), $(s.from.paid), n(s.to.count), $(s.to.billed), $(s.to.paid)]), ["all", n(r.claims.from.count), $(r.claims.from.billed), $(r.claims.from.paid), n(r.claims.to.count), $(r.claims.to.billed), $(r.claims.to.paid)]],
  );
  if (r.claims.transitions.length) table(["status at A", "status at B", "claims", "paid change"], r.claims.transitions.map((t) => [t.from, t.to, n(t.count), $(t.paidChange)]));
  const pm = r.claims.paidMovement;
  H.push(`<p>Paid movement: ${esc($(pm.newClaims))} from new claims, ${esc($(pm.removedClaims))} from removed claims, ${esc($(pm.changedClaims))} from claims present at both; ${esc($(pm.total))} in all.</p>`);
  H.push("<h2>Consistency checks (as of B)</h2>");
  table(["check", "findings"], CheckNames.map((c) => [CheckTitles[c], n(r.findings[c])]));
  H.push("<p>By group, the largest first; open a list for its ids (findings.csv has every finding with its detail).</p>", findingGroupsHtml(r.findingsByGroup, r.groupNames));
  H.push("<h2>Files</h2><ul>");
  for (const f of files) H.push(`<li><code>${esc(f.file)}</code>: ${n(f.rows)} rows</li>`);
  H.push("<li><code>summary.md</code>, <code>report.json</code>, <code>manifest.json</code></li></ul>");
  return (
    `<!doctype html>\n<html lang="en"><head><meta charset="utf-8"><meta name="viewport" content="width=device-width, initial-scale=1">` +
    `<title>Reconciliation: ${esc(r.from.date)} → ${esc(r.to.date)}</title><style>${CSS}</style></head><body>\n${H.join("\n")}\n</body></html>\n`
  );
}

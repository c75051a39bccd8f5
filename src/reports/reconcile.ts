/**
 * `benefits-sync reconcile --from A --to B --out DIR`: what changed between two runs, in the terms
 * of finance and eligibility teams, and whether it adds up.
 *
 * Everything is read in one read transaction (a sync may be writing meanwhile: WAL gives this
 * report the snapshot as it was when it began), written into a staging folder inside DIR, and
 * moved into DIR only when every file is complete: a report appears whole or not at all.
 */
import { lstatSync, mkdtempSync, renameSync, rmSync, type Stats } from "node:fs";
import { join } from "node:path";
import type { Database } from "better-sqlite3";
import { InputFileError, UsageError } from "../input-errors.js";
import { HashedFile } from "../sinks/files/hashed-file.js";
import { MANIFEST, type ManifestFile } from "../sinks/files/manifest.js";
import { prepareOutputDir } from "../sinks/output-dir.js";
import { migrations } from "../store/schema/migrations.js";
import { OutputError, explainFsError } from "../sinks/output-error.js";
import type { ReportScope } from "./as-of.js";
import { CheckNames, type CheckName } from "./check-names.js";
import { claimsFigures } from "./claims.js";
import { FindingColumns, runChecks, type Finding } from "./checks.js";
import { FindingsByGroup } from "./findings-by-group.js";
import { groupNames } from "./group-names.js";
import { EligibilityColumns, auditRows, membershipFigures, type EligibilityRow } from "./membership.js";
import { resolvePeriod } from "./periods.js";
import { reportJson, type ReconcileReport } from "./reconcile-report.js";
import { renderHtml, renderMarkdown } from "./render.js";
import { sheetRow } from "./sheet-row.js";

export interface ReconcileOptions {
  /** A run id or a date (YYYY-MM-DD): the last successful run on or before it. */
  readonly from: string;
  readonly to: string;
  readonly outDir: string;
  /** The date "terminated" is judged against; default: the date run B started (UTC). */
  readonly asOf?: string;
  /** Findings listed by name in the summary and the HTML page, per check (all are in findings.csv). */
  readonly examplesPerCheck?: number;
  /** Told as each part of the report begins (a million members take about a minute in all). */
  readonly onPhase?: (phase: string) => void;
}

export function reconcile(db: Database, opts: ReconcileOptions): ReconcileReport {
  // Opened read-only, the snapshot is not migrated: one from an older benefits-sync lacks what the
  // report reads.
  const version = db.pragma("user_version", { simple: true }) as number;
  if (version < migrations.length) {
    throw new InputFileError([
      `db: ${db.name} has schema version ${version}; this benefits-sync reads version ${migrations.length}. run \`benefits-sync sync\` (or any command that writes to it) once, then reconcile again`,
    ]);
  }
  db.exec("BEGIN");
  try {
    const from = resolvePeriod(db, opts.from, "--from");
    const to = resolvePeriod(db, opts.to, "--to");
    if (from.runId > to.runId) {
      throw new UsageError([`--from resolves to run ${from.runId}, later than --to's run ${to.runId}: give the earlier period as --from`]);
    }
    // Checked after the periods: a bad --from or --to creates no folder.
    const outDir = prepareOutputDir(opts.outDir, { kind: "report", parents: true });
    const runDates = new Map((db.prepare("SELECT run_id, substr(started_at, 1, 10) AS d FROM _runs").all() as { run_id: number; d: string }[]).map((r) => [r.run_id, r.d]));
    const scope: ReportScope = { db, from, to, asOfDate: opts.asOf ?? to.date, runDates };
    return write(outDir, scope, opts.examplesPerCheck ?? 10, opts.onPhase ?? (() => {}));
  } finally {
    db.exec("DROP TABLE IF EXISTS temp.moves_members; DROP TABLE IF EXISTS temp.moves_coverages; DROP TABLE IF EXISTS temp.moves_claims");
    db.exec("DROP TABLE IF EXISTS temp.cov_b; DROP TABLE IF EXISTS temp.plans_b; DROP TABLE IF EXISTS temp.groups_b");
    if (db.inTransaction) db.exec("ROLLBACK");
  }
}

function write(outDir: string, scope: ReportScope, examplesPerCheck: number, phase: (p: string) => void): ReconcileReport {
  const staging = mkdtempSync(join(outDir, ".reconcile-"));
  const open: HashedFile[] = [];
  try {
    const files: ManifestFile[] = [];
    const csv = (name: string, header: readonly string[]): HashedFile => {
      const f = new HashedFile(staging, name);
      open.push(f);
      f.text(sheetRow(header));
      return f;
    };
    const done = (f: HashedFile): void => {
      files.push(f.close());
    };
    const row = (f: HashedFile, cols: readonly string[], r: Record<string, unknown>) => f.row(sheetRow(cols.map((c) => String(r[c] ?? ""))));

    phase("membership and its movement");
    const changes = csv("eligibility-changes.csv", EligibilityColumns);
    let changeRows = 0;
    const membership = membershipFigures(scope, (e: EligibilityRow) => {
      changeRows++;
      row(changes, EligibilityColumns, e as unknown as Record<string, unknown>);
    });
    done(changes);
    phase("the 030 audit of coverage as of B");
    const audit = csv("eligibility-audit.csv", EligibilityColumns);
    const auditCount = auditRows(scope, (e) => row(audit, EligibilityColumns, e as unknown as Record<string, unknown>));
    done(audit);

    const cells = csv("membership.csv", ["group_id", "group_policy_id", "plan_id", "status", "at_from", "added", "deleted", "moved_in", "moved_out", "at_to", "adds_up"]);
    for (const c of membership.cells) {
      cells.row(sheetRow([c.groupId, c.groupPolicyId, c.planId, c.status, String(c.from), String(c.added), String(c.deleted), String(c.movedIn), String(c.movedOut), String(c.to), c.holds ? "yes" : "NO"]));
    }
    done(cells);

    phase("claims");
    const claims = claimsFigures(scope);
    // The arithmetic is per status, across groups (a claim moves between statuses, not groups):
    // each row carries its status's verdict, so a reader of this file alone sees a failure too.
    const statusHolds = new Map(claims.arithmetic.map((a) => [a.status, a.holds]));
    const byGroup = csv("claims.csv", ["group_id", "status", "from_count", "from_billed", "from_allowed", "from_paid", "to_count", "to_billed", "to_allowed", "to_paid", "status_adds_up"]);
    for (const g of claims.byGroup) {
      const holds = statusHolds.get(g.status) !== false;
      byGroup.row(sheetRow([g.groupId, g.status, String(g.from.count), g.from.billed, g.from.allowed, g.from.paid, String(g.to.count), g.to.billed, g.to.allowed, g.to.paid, holds ? "yes" : "NO"]));
    }
    done(byGroup);
    const transitions = csv("claim-transitions.csv", ["from_status", "to_status", "claims", "paid_change"]);
    for (const t of claims.transitions) transitions.row(sheetRow([t.from, t.to, String(t.count), t.paidChange]));
    done(transitions);

    phase("consistency checks");
    const findingsFile = csv("findings.csv", FindingColumns);
    const examples = Object.fromEntries(CheckNames.map((c) => [c, [] as Finding[]])) as Record<CheckName, Finding[]>;
    const byGroupOfFindings = new FindingsByGroup();
    const findings = runChecks(scope, (f) => {
      row(findingsFile, FindingColumns, f as unknown as Record<string, unknown>);
      byGroupOfFindings.add(f);
      if (examples[f.check].length < examplesPerCheck) examples[f.check].push(f);
    });
    done(findingsFile);

    const { members, holds: membershipHolds, ...coverages } = membership;
    const report: ReconcileReport = {
      from: scope.from,
      to: scope.to,
      asOfDate: scope.asOfDate,
      members,
      coverages,
      claims,
      eligibility: { changes: changeRows, audit: auditCount },
      findings,
      examples,
      findingsByGroup: byGroupOfFindings.groups(),
      groupNames: groupNames(scope),
      arithmeticHolds: membershipHolds && claims.holds,
      dir: outDir,
      files,
    };
    phase("summary and page");
    const text = (name: string, body: string): ManifestFile => {
      const f = new HashedFile(staging, name);
      open.push(f);
      f.text(body);
      return f.close();
    };
    // The page and the summary list every file but themselves and the manifest.
    const listed = [...files];
    files.push(text("summary.md", renderMarkdown(report, listed)));
    files.push(text("report.html", renderHtml(report, listed)));
    files.push(text("report.json", `${JSON.stringify(reportJson({ ...report, files }), null, 2)}\n`));
    text(MANIFEST, `${JSON.stringify({ kind: "reconciliation", from: scope.from.runId, to: scope.to.runId, files }, null, 2)}\n`);
    // Everything is complete: move the files in, the manifest last. A name taken by something
    // that is not a file would stop the moves halfway: refused before the first.
    for (const f of [...files.map((x) => x.file), MANIFEST]) {
      const target = join(outDir, f);
      const st = lstatOrUndefined(target);
      if (st && !st.isFile()) throw new OutputError(target, "it exists and is not a file", `move it away; the report writes ${f} there`, undefined, "report");
    }
    for (const f of [...files.map((x) => x.file), MANIFEST]) renameSync(join(staging, f), join(outDir, f));
    report.files = files;
    return report;
  } catch (e) {
    throw explainFsError(outDir, outDir, e, "report");
  } finally {
    for (const f of open) f.abandon();
    rmSync(staging, { recursive: true, force: true });
  }
}

function lstatOrUndefined(p: string): Stats | undefined {
  try {
    return lstatSync(p);
  } catch {
    return undefined;
  }
}

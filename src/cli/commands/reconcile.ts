/**
 * `benefits-sync reconcile --from A --to B --out DIR [--as-of DATE] [--json]`: compare two periods
 * of the snapshot (see src/reports/reconcile.ts). Exit 0 written and the arithmetic holds; 1 the
 * report was written but its arithmetic does not hold (the snapshot's history is inconsistent), or
 * the folder could not be written; 2 bad usage (an unknown or unfinished run, no run by that date).
 */
import { relative, resolve } from "node:path";
import { ConfigError } from "../../errors.js";
import { openSnapshotToRead } from "../snapshot-to-read.js";
import type { CommandContext } from "../context.js";
import { ExitCode } from "../exit-codes.js";

export async function run(ctx: CommandContext): Promise<number> {
  const o = ctx.options as { from?: string; to?: string; out?: string; asOf?: string };
  const problems: string[] = [];
  if (o.from === undefined) problems.push("--from: the earlier period is required: a run id, or a date YYYY-MM-DD (the last successful run on or before it)");
  if (o.to === undefined) problems.push("--to: the later period is required: a run id, or a date YYYY-MM-DD (the last successful run on or before it)");
  if (o.out === undefined || o.out === "") problems.push("--out: the directory to write the report into is required (it is created if missing; its parent must exist)");
  if (problems.length) throw new ConfigError(problems);
  const config = ctx.config();
  const { openDatabase } = await import("../../store/file/database.js");
  const { reconcile } = await import("../../reports/reconcile.js");
  const { reportJson } = await import("../../reports/reconcile-report.js");
  const { arithmeticLines } = await import("../../reports/render.js");
  const { moneyText } = await import("../../reports/money.js");
  const { OutputError } = await import("../../sinks/output-error.js");
  const db = openSnapshotToRead(config.db);
  let report;
  try {
    // On a terminal, one redrawn line says which part is being read; a log (cron, a pipe) gets none.
    const tty = (ctx.stderr as { isTTY?: boolean }).isTTY === true && !ctx.globals.quiet;
    const started = Date.now();
    const onPhase = tty ? (p: string) => ctx.stderr.write(`\r\x1b[2Kreconcile: ${p} (${((Date.now() - started) / 1000).toFixed(0)} s)`) : undefined;
    report = reconcile(db, { from: o.from!, to: o.to!, outDir: resolve(ctx.cwd, o.out!), ...(o.asOf ? { asOf: o.asOf } : {}), ...(onPhase ? { onPhase } : {}) });
    if (tty) ctx.stderr.write("\r\x1b[2K");
  } catch (e) {
    if (e instanceof OutputError) {
      ctx.stderr.write(`benefits-sync reconcile: ${e.message}\n`);
      return ExitCode.RUN_FAILED;
    }
    throw e;
  } finally {
    db.close();
  }
  const failed = arithmeticLines(report).filter((l) => !l.holds);
  for (const l of failed) ctx.stderr.write(`benefits-sync reconcile: the arithmetic does not hold: ${l.text}\n`);
  if (ctx.globals.json) {
    ctx.stdout.write(`${JSON.stringify(reportJson(report))}\n`);
  } else if (!ctx.globals.quiet || failed.length) {
    const rel = (p: string) => relative(ctx.cwd, p) || ".";
    const r = report;
    const say = (s: string) => ctx.stdout.write(`${s}\n`);
    // Counts and money read as on the page: with thousands separators.
    const n = (x: number) => x.toLocaleString("en-US");
    say(`Reconciliation of run ${r.from.runId} (${r.from.startedAt}) with run ${r.to.runId} (${r.to.startedAt}):`);
    say(`  members    ${n(r.members.from)} -> ${n(r.members.to)} (${n(r.members.added)} added, ${n(r.members.deleted)} deleted)`);
    const mv = r.coverages.movement;
    say(`  coverages  ${n(mv.addition)} additions, ${n(mv.termination)} terminations, ${n(mv.reinstatement)} reinstatements, ${n(mv.change)} changes, ${n(mv.deletion)} deletions`);
    say(`  claims     ${n(r.claims.from.count)} -> ${n(r.claims.to.count)}; paid ${moneyText(r.claims.from.paid)} -> ${moneyText(r.claims.to.paid)}`);
    const findings = Object.entries(r.findings).filter(([, v]) => v > 0);
    say(`  findings   ${findings.length ? findings.map(([k, v]) => `${k} ${n(v)}`).join(", ") : "none"}`);
    say(`  arithmetic ${failed.length ? "DOES NOT HOLD (see above)" : "holds"}`);
    say(`Report: ${rel(`${r.dir}/report.html`)} (and summary.md, report.json, CSV files in ${rel(r.dir)}/)`);
  }
  return failed.length ? ExitCode.RUN_FAILED : ExitCode.OK;
}

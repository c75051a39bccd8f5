/**
 * `benefits-sync demo`: the whole story on the embedded sandbox, with no set-up: sync, a simulated
 * day of changes, sync again, that run's deltas as CSV, a reconciliation of the two runs; then what
 * changed and where it all went, ending with the report's path.
 */
import { basename, join, relative } from "node:path";
import type { CommandContext } from "../context.js";
import { ExitCode } from "../exit-codes.js";
import { progressReporter } from "../progress.js";

/**
 * How the user runs benefits-sync again from where they are: `benefits-sync` when the demo ran as
 * an installed command; from a clone (`npm run demo` runs `node dist/src/cli/main.js demo`), the
 * same script by its path, which needs no install and asks no registry for the name.
 */
function commandAsRun(cwd: string, script: string | undefined = process.argv[1]): string {
  if (!script || basename(script) !== "main.js") return "benefits-sync";
  const path = relative(cwd, script);
  return `node ${/^[\w./-]+$/.test(path) ? path : `'${path.replace(/'/g, "'\\''")}'`}`;
}

export async function run(ctx: CommandContext): Promise<number> {
  const o = ctx.options as { out?: string; members?: number };
  const { runDemo } = await import("../../pipeline/demo.js");
  const outDir = o.out ?? "benefits-sync-demo";
  const say = (line: string) => ctx.stdout.write(`${line}\n`);
  const quiet = ctx.globals.quiet || ctx.globals.json;
  const result = await runDemo({
    outDir,
    ...(o.members !== undefined ? { members: o.members } : {}),
    say: ctx.globals.json ? () => {} : say,
    ...(quiet ? {} : { progress: () => progressReporter(ctx.stderr) }),
  });
  const rel = (p: string) => relative(ctx.cwd, p) || ".";
  const wh = result.webhooks;
  const ok = result.matchesGroundTruth && result.report.arithmeticHolds && wh.matchesGroundTruth;
  if (ctx.globals.json) {
    say(
      JSON.stringify({
        db: result.dbPath,
        deltas: result.deltas.dir,
        report: join(result.report.dir, "report.html"),
        runs: [result.first.runId, result.second.runId],
        second: result.second.resources,
        matchesGroundTruth: result.matchesGroundTruth,
        arithmeticHolds: result.report.arithmeticHolds,
        webhooks: { day: wh.day, events: wh.events, members: wh.members, runs: wh.drain.runs.map((r) => r.runId), applied: wh.drain.applied, matchesGroundTruth: wh.matchesGroundTruth },
      }),
    );
    return ok ? ExitCode.OK : ExitCode.RUN_FAILED;
  }
  say(`Run ${result.second.runId}: after the simulated day, in ${(result.second.durationMs / 1000).toFixed(1)} s:`);
  for (const [r, c] of Object.entries(result.second.resources)) {
    if (c.inserted + c.updated + c.deleted > 0) say(`  ${r.padEnd(10)} ${c.inserted} inserted, ${c.updated} updated, ${c.deleted} deleted (${c.unchanged} unchanged)`);
  }
  say(result.matchesGroundTruth ? "The recorded changes equal the sandbox's own record of the day, exactly." : "WARNING: the recorded changes differ from the sandbox's record of the day.");
  const rep = result.report;
  const findings = Object.values(rep.findings).reduce((a, b) => a + b, 0);
  say(
    `Reconciliation of run ${rep.from.runId} with run ${rep.to.runId}: members ${rep.members.from} -> ${rep.members.to}, ` +
      `${Object.entries(rep.coverages.movement).map(([k, v]) => `${v} ${k}${v === 1 ? "" : "s"}`).join(", ")}; ` +
      `claims paid ${rep.claims.from.paid} -> ${rep.claims.to.paid}; ${findings} consistency finding${findings === 1 ? "" : "s"} ` +
      `(the sandbox plants one of each kind); ${rep.arithmeticHolds ? "the arithmetic holds" : "THE ARITHMETIC DOES NOT HOLD"}.`,
  );
  say(
    `Webhooks, simulated day ${wh.day}: the sandbox sent ${wh.events} events for ${wh.members} members (each twice, out of order); ` +
      `the worker refetched each member once and applied them as run ${wh.drain.runs.map((r) => r.runId).join(", ") || "(none)"} in ${(wh.durationMs / 1000).toFixed(1)} s.`,
  );
  say(
    wh.matchesGroundTruth
      ? `The members in the snapshot match the sandbox without a full walk; the day's ${wh.leftToTheWalk} other changes (deleted members, claims, groups: no event names them) wait for the next full walk.`
      : "WARNING: the changes the webhooks brought differ from the sandbox's record of the day.",
  );
  say("");
  say("Where everything went:");
  say(`  snapshot (SQLite):  ${rel(result.dbPath)}`);
  say(`  run ${result.second.runId} deltas (CSV): ${rel(result.deltas.dir)}/ (${result.deltas.files.map((f) => `${f.file} ${f.rows} row${f.rows === 1 ? "" : "s"}`).join(", ")}; manifest.json)`);
  say(`  reconciliation:     ${rel(rep.dir)}/ (summary.md, eligibility-changes.csv, eligibility-audit.csv, claims.csv, findings.csv, ...)`);
  say("");
  say("Try:");
  say(`  sqlite3 ${rel(result.dbPath)} "SELECT resource, op, COUNT(*) FROM changes WHERE run_id = ${result.second.runId} GROUP BY 1, 2"`);
  say(`  sqlite3 ${rel(result.dbPath)} "SELECT resource, id, field, old_value, new_value FROM field_changes WHERE run_id = ${result.second.runId} LIMIT 10"`);
  say("  (the README's analyst guide has more questions, each tested)");
  say(`  BENEFITS_DB=${rel(result.dbPath)} ${commandAsRun(ctx.cwd)} runs`);
  say("");
  say(`Report: ${rel(join(rep.dir, "report.html"))}`);
  return ok ? ExitCode.OK : ExitCode.RUN_FAILED;
}

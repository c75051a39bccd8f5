import type { RunReport } from "../pipeline/sync.js";
import type { CommandContext } from "./context.js";

/**
 * Print a run's report: a short table for people, or with `--json` one JSON object as the last
 * line of stdout (the contract's shape), for scripts.
 */
export function printRunReport(ctx: Pick<CommandContext, "stdout" | "stderr" | "globals">, report: RunReport & { deltas?: { dir: string } }): void {
  if (ctx.globals.json) {
    ctx.stdout.write(
      `${JSON.stringify({
        runId: report.runId,
        status: report.status,
        ...(report.dryRun ? { dryRun: true } : {}),
        ...(report.resumedFrom !== undefined ? { resumedFrom: report.resumedFrom } : {}),
        resources: report.resources,
        ...(report.error ? { error: report.error } : {}),
        durationMs: report.durationMs,
        ...(report.deltas ? { deltas: report.deltas.dir } : {}),
      })}\n`,
    );
    return;
  }
  const head = report.dryRun
    ? `Dry run (nothing recorded): ${report.status === "succeeded" ? "it would change" : "it failed"}`
    : `Run ${report.runId} ${report.status}${report.resumedFrom !== undefined ? ` (resumed run ${report.resumedFrom})` : ""} in ${(report.durationMs / 1000).toFixed(1)} s`;
  const rows = Object.entries(report.resources).map(
    ([r, c]) => `  ${r.padEnd(10)} ${String(c.seen).padStart(8)} seen ${String(c.inserted).padStart(7)} inserted ${String(c.updated).padStart(7)} updated ${String(c.deleted).padStart(7)} deleted ${String(c.unchanged).padStart(8)} unchanged${c.quarantined ? `  ${c.quarantined} quarantined` : ""}`,
  );
  const out = report.status === "succeeded" ? ctx.stdout : ctx.stderr;
  out.write(`${[head, ...rows].join("\n")}\n`);
  if (report.error) ctx.stderr.write(`error (${report.error.code}): ${report.error.message}\n`);
}

import type { RunReport } from "../pipeline/sync.js";
import type { CsvDelivery } from "../sinks/csv/deliver-csv.js";
import type { OutputDelivery } from "../sinks/outputs.js";
import type { CommandContext } from "./context.js";
import { ExitCode } from "./exit-codes.js";
import { isOutputRefusal, isSnapshotRefusal } from "../sinks/output-error.js";

type Ctx = Pick<CommandContext, "stdout" | "stderr" | "globals">;

/**
 * 0 when the run succeeded and every delivery landed; 75 when another run held the snapshot; 2
 * when an output refused it (it belongs to another snapshot, or its bucket is missing or unencrypted); 1 otherwise.
 */
export function runExitCode(report: RunReport & { deliveries?: OutputDelivery[] }): number {
  if (report.status === "busy") return ExitCode.BUSY;
  if (report.status !== "succeeded") return ExitCode.RUN_FAILED;
  const failed = report.deliveries?.filter((d) => d.outcome.status === "failed") ?? [];
  if (failed.some((d) => isOutputRefusal(d.outcome.error?.code))) return ExitCode.USAGE;
  return failed.length ? ExitCode.RUN_FAILED : ExitCode.OK;
}

/**
 * Where a run's notices go (a PII key generated, a claims window that selected nothing): stderr
 * as they come; with `--quiet`, held back and printed only when the run did not end well, since
 * cron mails whatever a job prints and a quiet success prints nothing at all.
 *
 * @example const notices = runNotices(ctx); ...runSyncJob({ onNotice: notices.notice }); notices.settle(report)
 */
export function runNotices(ctx: Ctx): { notice: (message: string) => void; settle: (report: RunReport & { deliveries?: OutputDelivery[] }) => void } {
  const held: string[] = [];
  return {
    notice: (m) => void (ctx.globals.quiet ? held.push(m) : ctx.stderr.write(`${m}\n`)),
    settle: (report) => {
      if (runExitCode(report) !== ExitCode.OK) for (const m of held) ctx.stderr.write(`${m}\n`);
    },
  };
}

/**
 * Print a run's report: a short table for people, or with `--json` one JSON object as the last
 * line of stdout (the contract's shape), for scripts. With a delivery (`sync --out`), the object
 * also has `delivery` ({status, runs, dir?, error?}) and, when it was delivered, `deltas` (the folder).
 */
export function printRunReport(ctx: Ctx, report: RunReport & { delivery?: CsvDelivery; deliveries?: OutputDelivery[] }): void {
  const delivery = report.delivery;
  // The outputs other than `--out` (printed as `delivery`, as before): warehouses, config sinks, other formats.
  const others = (report.deliveries ?? []).filter((d) => !delivery || d.outcome !== (report.deliveries?.[0]?.outcome));
  const folder = delivery?.status === "delivered" ? delivery.value : undefined;
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
        ...(report.newFields ? { newFields: report.newFields } : {}),
        ...(folder ? { deltas: folder.dir } : {}),
        ...(delivery
          ? {
              delivery: {
                status: delivery.status,
                runs: delivery.runs,
                ...(folder ? { dir: folder.dir } : { outDir: delivery.outDir }),
                ...((delivery.values?.length ?? 0) > 1 ? { dirs: delivery.values!.map((f) => f.dir) } : {}),
                ...(delivery.delivered?.length ? { delivered: delivery.delivered } : {}),
                ...(delivery.error ? { error: delivery.error } : {}),
              },
            }
          : {}),
        ...(report.deliveries?.length
          ? {
              deliveries: report.deliveries.map((d) => ({
                output: d.target,
                kind: d.spec.kind,
                ...(d.spec.name ? { name: d.spec.name } : {}),
                status: d.outcome.status,
                runs: d.outcome.runs,
                ...(d.outcome.error ? { error: d.outcome.error } : {}),
              })),
            }
          : {}),
      })}\n`,
    );
  } else if (ctx.globals.quiet && runExitCode(report) === ExitCode.OK) {
    // --quiet: nothing on success (cron mails what a job prints).
  } else {
    const head = report.status === "busy"
      ? `No run started: ${report.error.message.startsWith("the snapshot is locked") ? "another program holds a write lock on" : "another run holds"} this snapshot (nothing was changed; exit 75, try again later)`
      : report.runId === null
      ? "No run started: the snapshot could not be claimed (nothing was changed)"
      : report.failedAtStart
      ? `Run ${report.runId} was started and failed before its walk: ${report.failedAtStart.recorded ? "it is recorded as failed" : "it could not be recorded as failed, so it shows as running until the next run marks it failed (abandoned)"}`
      : report.dryRun
      ? `Dry run (nothing recorded): ${report.status === "succeeded" ? "it would change" : "it failed"}`
      : report.error?.code === "INTERRUPTED"
      ? `Run ${report.runId} interrupted (${report.error.message}): recorded as failed with its pages kept; the next run resumes it`
      : `Run ${report.runId} ${report.status}${report.resumedFrom !== undefined ? ` (resumed run ${report.resumedFrom})` : ""} in ${(report.durationMs / 1000).toFixed(1)} s`;
    const rows = Object.entries(report.resources).map(
      ([r, c]) => `  ${r.padEnd(10)} ${String(c.seen).padStart(8)} seen ${String(c.inserted).padStart(7)} inserted ${String(c.updated).padStart(7)} updated ${String(c.deleted).padStart(7)} deleted ${String(c.unchanged).padStart(8)} unchanged${c.quarantined ? `  ${c.quarantined} quarantined` : ""}`,
    );
    const out = report.status === "succeeded" ? ctx.stdout : ctx.stderr;
    out.write(`${[head, ...rows].join("\n")}\n`);
    if (report.error) ctx.stderr.write(`error (${report.error.code}): ${report.error.message}\n`);
    // One line per run folder written (a catch-up writes several, oldest first).
    for (const f of delivery?.values ?? (folder ? [folder] : [])) {
      const changed = f.files.filter((x) => x.rows > 0);
      ctx.stdout.write(
        `Deltas: ${f.dir} (${runsText(f.runs)}: ${changed.length ? changed.map((x) => `${x.file} ${x.rows} row${x.rows === 1 ? "" : "s"}`).join(", ") : "no changes"})\n`,
      );
    }
  }
  for (const d of others) {
    if (d.outcome.status === "failed") {
      ctx.stderr.write(
        `Deltas not delivered to ${d.target}: ${d.outcome.error?.message ?? "unknown error"} [${d.outcome.error?.code ?? "DELIVERY"}]\n` +
          (isSnapshotRefusal(d.outcome.error?.code)
            ? `Run ${report.runId} ${report.status} and is recorded; nothing was sent there, and no later run of this snapshot is: give it another output.\n`
            : `Run ${report.runId} ${report.status} and is recorded; ${d.outcome.runs.length ? `the changes of ${runsText(d.outcome.runs)} stay pending there` : "nothing was sent"}, and the next run delivers them.\n`),
      );
    } else if (!ctx.globals.json && !ctx.globals.quiet && d.outcome.status === "delivered") {
      ctx.stdout.write(`Deltas delivered to ${d.target} (${runsText(d.outcome.runs)})\n`);
    }
  }
  // A failed delivery is a problem whatever the output mode: say what, where, and what happens next.
  if (delivery?.status === "failed") {
    const pending = isSnapshotRefusal(delivery.error?.code)
      ? `nothing was sent to ${delivery.outDir}, and no later run of this snapshot is: give it another --out`
      : `${delivery.runs.length ? `the changes of ${runsText(delivery.runs)} stay pending for ${delivery.outDir}` : `nothing was sent to ${delivery.outDir}`}, and the next \`sync --out\` to it delivers them`;
    ctx.stderr.write(
      `Deltas not delivered: ${delivery.error?.message ?? "unknown error"} [${delivery.error?.code ?? "DELIVERY"}]\n` +
        `Run ${report.runId} ${report.status} and is recorded; ${pending}.\n`,
    );
  }
}

const runsText = (runs: readonly number[]): string => (runs.length === 1 ? `run ${runs[0]}` : `runs ${runs.join(", ")}`);

/**
 * `benefits-sync webhooks apply`: the worker that brings the snapshot up to the events received.
 * `--once` drains what is due and exits (75 when a sync holds the snapshot: the events stay
 * pending). Without it, it drains every second until SIGINT or SIGTERM (exit 130 or 143); a busy
 * snapshot is simply tried again.
 */
import type { CommandContext } from "../context.js";
import { ExitCode } from "../exit-codes.js";
import { watchSignals } from "../signals.js";

/** How long the worker rests between drains when nothing was due. */
const POLL_MS = 1000;

export async function run(ctx: CommandContext): Promise<number> {
  const config = ctx.config();
  const { applyWebhooksOnce } = await import("../../webhooks/apply-job.js");
  const { recordApplyLag } = await import("../../telemetry/otel-metrics.js");
  const signals = watchSignals();
  const say = (line: string) => {
    if (!ctx.globals.quiet && !ctx.globals.json) ctx.stdout.write(`${line}\n`);
  };
  try {
    for (;;) {
      const r = await applyWebhooksOnce(config, { signal: signals.signal, onApplied: recordApplyLag });
      if (ctx.options.once === true && ctx.globals.json) ctx.stdout.write(`${JSON.stringify(r)}\n`);
      if (r.runs.length > 0 || r.parked > 0) {
        say(
          `${r.runs.map((x) => `run ${x.runId} ${x.status} (${x.members} member${x.members === 1 ? "" : "s"})`).join(", ") || "no run"}: ` +
            `${r.applied} event${r.applied === 1 ? "" : "s"} applied, ${r.notFound} member${r.notFound === 1 ? "" : "s"} not found (kept until a full walk), ` +
            `${r.retrying} to retry, ${r.parked} parked; ${r.pendingAfter} pending`,
        );
      }
      if (r.busy) ctx.stderr.write(`benefits-sync webhooks apply: ${r.busy.message}; ${r.pendingAfter} event${r.pendingAfter === 1 ? "" : "s"} stay pending for the next drain\n`);
      if (r.error) ctx.stderr.write(`benefits-sync webhooks apply: ${r.error.code}: ${r.error.message}; the events stay pending\n`);
      if (ctx.options.once === true) {
        if (r.busy) return ExitCode.BUSY;
        return r.error ? ExitCode.RUN_FAILED : ExitCode.OK;
      }
      if (signals.signal.aborted) break;
      await new Promise<void>((resolve) => {
        const t = setTimeout(resolve, POLL_MS);
        signals.signal.addEventListener("abort", () => (clearTimeout(t), resolve()), { once: true });
      });
      if (signals.signal.aborted) break;
    }
    return signals.exitCode(ExitCode.OK);
  } finally {
    signals.dispose();
  }
}

/**
 * `benefits-sync jobs`: each scheduled job with its schedule, whether it is enabled, its next fire
 * time and its last run (status, when, how long). Reads the snapshot, never the service.
 */
import { jobRunsSource } from "../../jobs/report-runs.js";
import { hasSnapshot, openSnapshotToRead } from "../snapshot-to-read.js";
import type { CommandContext } from "../context.js";
import { ExitCode } from "../exit-codes.js";

interface LastRun {
  /** null for a report (the reconciliation job), which is not a sync run. */
  runId: number | null;
  status: string;
  startedAt: string;
  durationMs: number | null;
  error: string | null;
}

export async function run(ctx: CommandContext): Promise<number> {
  const config = ctx.config();
  const { effectiveJobs, nextFire } = await import("../../jobs/registry.js");
  const jobs = effectiveJobs(config);
  // Read only: no snapshot yet (no file, or an empty one) is no last run; the file is left as it is.
  const db = hasSnapshot(config.db) ? openSnapshotToRead(config.db) : undefined;
  try {
    const last = db?.prepare(`SELECT run_id, status, started_at, finished_at, error FROM ${jobRunsSource(db)} WHERE job = ? ORDER BY started_at DESC, run_id DESC LIMIT 1`);
    const now = new Date();
    const rows = jobs.map((j) => {
      const r = last?.get(j.name) as { run_id: number | null; status: string; started_at: string; finished_at: string | null; error: string | null } | undefined;
      const lastRun: LastRun | null = r
        ? { runId: r.run_id, status: r.status, startedAt: r.started_at, durationMs: r.finished_at ? Date.parse(r.finished_at) - Date.parse(r.started_at) : null, error: r.error }
        : null;
      const next = j.enabled ? nextFire(j, now) : null;
      return { name: j.name, enabled: j.enabled, schedule: j.schedule, timezone: j.timezone, resources: j.resources, sinks: j.sinks, nextFire: next?.toISOString() ?? null, lastRun };
    });
    if (ctx.globals.json) {
      ctx.stdout.write(`${JSON.stringify({ jobs: rows })}\n`);
      return ExitCode.OK;
    }
    const lines = rows.map((r) => {
      const lastText = r.lastRun
        ? `${r.lastRun.runId === null ? "report" : `run ${r.lastRun.runId}`} ${r.lastRun.status} ${r.lastRun.startedAt}${r.lastRun.durationMs !== null ? ` (${(r.lastRun.durationMs / 1000).toFixed(1)} s)` : ""}`
        : "never run";
      return `${r.name.padEnd(24)} ${(r.enabled ? "" : "(disabled) ") + `${r.schedule} ${r.timezone}`}\n${"".padEnd(24)} next: ${r.nextFire ?? "-"}   last: ${lastText}`;
    });
    ctx.stdout.write(`${lines.join("\n")}\n`);
    return ExitCode.OK;
  } finally {
    db?.close();
  }
}

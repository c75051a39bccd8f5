/**
 * Telling people how jobs went, for those who look only when something is wrong:
 *
 * - JSON lines (one event per line: time, event, job, and what happened), for log shippers;
 * - a Prometheus textfile for node_exporter's textfile collector, rewritten (write, then rename)
 *   after each job from the run history, so it also tells the truth after a restart;
 * - healthchecks-style pings: `URL/start` when a job starts, `URL` when it succeeds, `URL/fail`
 *   when it fails. A ping that fails is logged, never fails the job.
 */
import type { Database } from "better-sqlite3";
import { renameSync, writeFileSync } from "node:fs";
import { request } from "undici";
import { escapeControls } from "../control-chars.js";
import { redact } from "../errors.js";
import { MaskedMarkers } from "../pii/field-masking.js";
import { label, metric } from "../prometheus-text.js";
import { maskedNewFieldCounts } from "../store/new-fields.js";
import { WalkedResources } from "../store/resources.js";
import type { Job } from "./job.js";
import { jobRunsSource } from "./report-runs.js";

export type LogEvent = { readonly event: string; readonly job?: string } & Record<string, unknown>;
export type JobLog = (e: LogEvent) => void;

/**
 * JSON lines on `out`, each with its time first. Messages are redacted (no key, no SSN), and each
 * string's control characters escaped before it becomes JSON, so that the line stays JSON (a C1
 * byte escaped afterwards, as `\x85`, would not be).
 */
export function jsonLines(out: { write(s: string): unknown }, now: () => Date = () => new Date()): JobLog {
  const safe = (_: string, v: unknown) => (typeof v === "string" ? escapeControls(v) : v);
  return (e) => out.write(`${redact(JSON.stringify({ time: now().toISOString(), ...e }, safe))}\n`);
}

export type PingKind = "start" | "success" | "fail";

/**
 * Ping a job's heartbeat URL; resolves to an error message when the ping did not land. The message
 * names the receiver by its origin only: a ping URL's path is often its token (healthchecks), and
 * its userinfo a password. Redacted, as any text from elsewhere (the HTTP client's error) may be.
 */
export async function ping(url: string, kind: PingKind, timeoutMs = 10_000): Promise<string | undefined> {
  const target = kind === "success" ? url : `${url.replace(/\/+$/, "")}/${kind}`;
  const to = `the ${kind} ping to ${originOf(url)}`;
  try {
    const res = await request(target, { method: "POST", headersTimeout: timeoutMs, bodyTimeout: timeoutMs, signal: AbortSignal.timeout(timeoutMs) });
    await res.body.dump();
    return res.statusCode >= 200 && res.statusCode < 300 ? undefined : `${to} answered ${res.statusCode}`;
  } catch (e) {
    return redact(`${to} could not be reached: ${e instanceof Error ? e.message : String(e)}`);
  }
}

function originOf(url: string): string {
  try {
    return new URL(url).origin;
  } catch {
    return "(an unreadable URL)";
  }
}

/**
 * The textfile's text: per job, its last run's status and duration, its last success time, and the
 * last successful run's record counts per resource, all read from the run history; and per walked
 * resource, how many field paths the service added without notice (`new_fields`).
 */
export function textfileMetrics(db: Database, jobs: readonly Job[]): string {
  const runs = jobRunsSource(db);
  const last = db.prepare(`SELECT run_id, status, started_at, finished_at FROM ${runs} WHERE job = ? AND status <> 'running' ORDER BY started_at DESC, run_id DESC LIMIT 1`);
  const lastOk = db.prepare(`SELECT run_id, finished_at FROM ${runs} WHERE job = ? AND status = 'succeeded' ORDER BY started_at DESC, run_id DESC LIMIT 1`);
  const counts = db.prepare("SELECT resource, seen, inserted, updated, deleted FROM _run_counts WHERE run_id = ?");
  const lines = {
    success: [metric("job_last_success_timestamp_seconds", "When the job last succeeded (end of the run), Unix seconds.")],
    status: [metric("job_last_run_succeeded", "1 when the job's last finished run succeeded, 0 when it failed.")],
    duration: [metric("job_last_run_duration_seconds", "How long the job's last finished run took.")],
    records: [metric("job_last_success_records", "Records of the job's last successful run, per resource and what happened to them.")],
    newFields: [metric("new_field_paths", "Field paths the service sent that benefits-sync does not know, per resource (`benefits-sync doctor` lists them).")],
    masked: [metric("new_field_paths_masked", "Of those, the ones the SSN rule masked, per resource and how: by its name, a typed pair's value, a shape in its text.")],
  };
  // Every resource has its line, 0 included: an alert on an increase needs the series before the first path.
  const newPaths = new Map((db.prepare("SELECT resource, count(*) AS n FROM new_fields GROUP BY resource").all() as { resource: string; n: number }[]).map((r) => [r.resource, r.n]));
  for (const r of WalkedResources) lines.newFields.push(`benefits_sync_new_field_paths{resource="${r}"} ${newPaths.get(r) ?? 0}\n`);
  const masked = new Map(maskedNewFieldCounts(db).map((c) => [`${c.resource} ${c.masked}`, c.n]));
  for (const r of WalkedResources) for (const m of MaskedMarkers) lines.masked.push(`benefits_sync_new_field_paths_masked{resource="${r}",masked="${m}"} ${masked.get(`${r} ${m}`) ?? 0}\n`);
  for (const j of jobs) {
    const l = `job="${label(j.name)}"`;
    const run = last.get(j.name) as { run_id: number; status: string; started_at: string; finished_at: string | null } | undefined;
    if (run) {
      lines.status.push(`benefits_sync_job_last_run_succeeded{${l}} ${run.status === "succeeded" ? 1 : 0}\n`);
      if (run.finished_at) lines.duration.push(`benefits_sync_job_last_run_duration_seconds{${l}} ${((Date.parse(run.finished_at) - Date.parse(run.started_at)) / 1000).toFixed(3)}\n`);
    }
    const ok = lastOk.get(j.name) as { run_id: number | null; finished_at: string } | undefined;
    if (!ok) continue;
    lines.success.push(`benefits_sync_job_last_success_timestamp_seconds{${l}} ${Math.floor(Date.parse(ok.finished_at) / 1000)}\n`);
    for (const c of counts.all(ok.run_id) as { resource: string; seen: number; inserted: number; updated: number; deleted: number }[]) {
      for (const what of ["seen", "inserted", "updated", "deleted"] as const) {
        lines.records.push(`benefits_sync_job_last_success_records{${l},resource="${label(c.resource)}",what="${what}"} ${c[what]}\n`);
      }
    }
  }
  return Object.values(lines).map((ls) => ls.join("")).join("");
}

/** Write the textfile whole or not at all: node_exporter must never read half of it. */
export function writeTextfile(path: string, text: string): void {
  const tmp = `${path}.${process.pid}.tmp`;
  writeFileSync(tmp, text, { mode: 0o644 });
  renameSync(tmp, path);
}

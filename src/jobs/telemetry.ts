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
import type { Job } from "./job.js";
import { gaugeText, jobGauges } from "./job-metrics.js";

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
 * resource, how many field paths the service added without notice (`new_fields`). See job-metrics.ts.
 */
export function textfileMetrics(db: Database, jobs: readonly Job[]): string {
  return gaugeText(jobGauges(db, jobs));
}

/** Write the textfile whole or not at all: node_exporter must never read half of it. */
export function writeTextfile(path: string, text: string): void {
  const tmp = `${path}.${process.pid}.tmp`;
  writeFileSync(tmp, text, { mode: 0o644 });
  renameSync(tmp, path);
}

/**
 * The jobs as configured: the definitions in `jobs/` with the config file's `jobs` section
 * applied (enabled, schedule, time zone, sinks, heartbeat URL). Every problem is a ConfigError that
 * names the key, collected in one go.
 */
import { JOBS } from "../../jobs/index.js";
import type { Config } from "../config/schema.js";
import { ConfigError } from "../errors.js";
import { UsageError } from "../input-errors.js";
import { cronProblem } from "./cron-fields.js";
import { lastFireAtOrBefore, nextFireAfter } from "./fire-times.js";
import type { Job, JobDefinition } from "./job.js";

export function effectiveJobs(config: Config, defs: readonly JobDefinition[] = JOBS): Job[] {
  const problems: string[] = [];
  const names = new Set(defs.map((d) => d.name));
  for (const n of Object.keys(config.jobs)) {
    if (!names.has(n)) problems.push(`jobs.${n}: no such job; the jobs are ${[...names].join(", ")}`);
  }
  const sinkNames = Object.keys(config.sinks);
  const jobs = defs.map((d): Job => {
    const set = config.jobs[d.name] ?? {};
    const schedule = set.schedule ?? d.schedule;
    const timezone = set.timezone ?? d.timezone ?? "UTC";
    const cron = cronProblem(schedule);
    if (cron) problems.push(`${set.schedule !== undefined ? `jobs.${d.name}.schedule` : `${d.name}.schedule (in its file under jobs/)`}: ${cron}`);
    if (!validTimeZone(timezone)) problems.push(`jobs.${d.name}.timezone: expected an IANA time zone such as "America/Chicago", got ${JSON.stringify(timezone)}`);
    const sinks = set.sinks ?? d.sinks ?? sinkNames;
    const from = set.sinks ? `jobs.${d.name}.sinks` : `${d.name}.sinks (in its file under jobs/)`;
    for (const s of sinks) if (!sinkNames.includes(s)) problems.push(`${from}: no sink named ${JSON.stringify(s)} in "sinks"`);
    return {
      ...d,
      schedule,
      timezone,
      enabled: set.enabled ?? d.enabledByDefault ?? true,
      sinks,
      ...(set.heartbeatUrl ? { heartbeatUrl: set.heartbeatUrl } : {}),
    };
  });
  if (problems.length) throw new ConfigError(problems);
  return jobs;
}

export function findJob(jobs: readonly Job[], name: string): Job {
  const job = jobs.find((j) => j.name === name);
  if (!job) throw new UsageError([`no job named ${JSON.stringify(name)}; the jobs are ${jobs.map((j) => j.name).join(", ")} (see \`benefits-sync jobs\`)`]);
  return job;
}

function validTimeZone(tz: string): boolean {
  try {
    new Intl.DateTimeFormat("en-US", { timeZone: tz });
    return true;
  } catch {
    return false;
  }
}

/** The next time the job fires after `after` (within 400 days), by cron's daylight-saving rule (fire-times.ts), or null. */
export function nextFire(job: Pick<Job, "schedule" | "timezone">, after: Date): Date | null {
  return nextFireAfter(job, after)?.at ?? null;
}

/** The last time the job was due at or before `now` (within 45 days), or null. */
export function previousFire(job: Pick<Job, "schedule" | "timezone">, now: Date): Date | null {
  return lastFireAtOrBefore(job, now)?.at ?? null;
}

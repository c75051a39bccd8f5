/**
 * What the scheduler runs when it starts, and why, said in one log line per job.
 *
 * A fire is missed when it fell while no scheduler ran on the snapshot: after the scheduler's own
 * record (scheduler-record.ts) and at or before now, and the job has not succeeded since (a run by
 * hand counts). Each such job runs once, for its latest due time, however many fires it missed.
 * On the first start ever nothing was missed, so nothing runs: a new deployment must not start the
 * weekly full walk on a weekday morning. `--run-missed` asks for more on purpose: every job whose
 * last success is older than its latest due time runs, whether or not a scheduler was running then.
 */
import type { Database } from "better-sqlite3";
import { lastFireAtOrBefore, localText, movedText, nextFireAfter, type Fire } from "./fire-times.js";
import { everRan, lastSuccess } from "./job-history.js";
import type { Job } from "./job.js";
import type { LogEvent } from "./telemetry.js";

/** One job's decision at start: `due` is set when it runs now (for that fire). */
export interface StartDecision {
  readonly job: Job;
  readonly due?: Fire;
  readonly moved?: string;
  readonly line: LogEvent;
}

export function startLine(lastSeen: Date | undefined, runMissed: boolean): string {
  if (runMissed) {
    const since = lastSeen ? `the scheduler last ran on this snapshot until ${localText(lastSeen, "UTC")}` : "first start of a scheduler on this snapshot";
    return `${since}; --run-missed: each job whose last success is older than its latest due time runs now, once`;
  }
  return lastSeen
    ? `the scheduler last ran on this snapshot until ${localText(lastSeen, "UTC")}: fires due since then run now, once per job`
    : "first start of a scheduler on this snapshot: nothing was missed, so nothing runs now (`schedule --run-missed` runs each job that is behind its schedule)";
}

/** Decide, for each job, whether it runs at start (see the module comment). */
export function decideAtStart(db: Database, jobs: readonly Job[], now: Date, lastSeen: Date | undefined, runMissed: boolean): StartDecision[] {
  return jobs.map((job) => {
    const due = lastFireAtOrBefore(job, now);
    const ok = lastSuccess(db, job.name);
    const behind = due !== null && (!ok || ok < due.at);
    const missed = behind && lastSeen !== undefined && due.at > lastSeen;
    const tz = job.timezone;
    if (due && (missed || (behind && runMissed))) {
      const why = missed
        ? `missed ${localText(due.at, tz)} while the scheduler was stopped, running now`
        : `${ok ? `last succeeded ${localText(ok, tz)}` : "never succeeded"}; latest due ${localText(due.at, tz)}; running now (--run-missed)`;
      const moved = movedText(due, tz);
      const line = { event: "job.missed", job: job.name, due: due.at.toISOString(), lastSuccess: ok?.toISOString() ?? null, message: `${job.name}: ${why}` };
      return { job, due, ...(moved ? { moved } : {}), line };
    }
    const next = nextFireAfter(job, now);
    const history = ok ? `last succeeded ${localText(ok, tz)}` : everRan(db, job.name) ? "no successful run yet" : "never ran";
    const message = `${job.name}: ${history}; next ${next ? localText(next.at, tz) : "none within 400 days"}`;
    return { job, line: { event: "job.next", job: job.name, next: next?.at.toISOString() ?? null, lastSuccess: ok?.toISOString() ?? null, message } };
  });
}

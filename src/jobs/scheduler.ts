/**
 * `benefits-sync schedule`: the enabled jobs, each on a timer to its next fire in its time zone.
 *
 * - Daylight saving: fire times follow cron's rule (fire-times.ts); a fire moved out of the spring
 *   gap says so in its log lines (`moved`). Our own timer, not node-cron's: node-cron's skips or
 *   repeats those fires.
 * - No overlap: a job still running from its last fire skips the next one (and says so); other
 *   jobs wait for the snapshot, since one run at a time holds it (the run lease), polling up to
 *   `waitForSnapshotMs`, then skip that fire and say so.
 * - Once per fire across schedulers: each fire is claimed in the snapshot (fires.ts) before it
 *   runs, so a second scheduler on the same file skips it.
 * - At start (catch-up.ts): a job whose fire fell while no scheduler ran (by the scheduler's own
 *   record, scheduler-record.ts) runs once, not once per missed fire; the first start ever runs
 *   nothing; `runMissed` runs every job that is behind its schedule. One log line per job says
 *   which runs and why, or when it fires next.
 * - Stop (SIGINT, SIGTERM): no new fire; the run in progress stops fetching, commits the page in
 *   hand and is recorded as interrupted (failed, code INTERRUPTED; the next run resumes it).
 * - A failing job is logged, written to the textfile, pinged as failed and told to `notify` (as
 *   are new fields, notify.ts); the others go on.
 */
import type { Database } from "better-sqlite3";
import { setTimeout as sleep } from "node:timers/promises";
import { redact } from "../errors.js";
import { decideAtStart, startLine, type StartDecision } from "./catch-up.js";
import { sinksReceived, whyFailed, whyThrown } from "./fire-detail.js";
import { movedText, nextFireAfter } from "./fire-times.js";
import { claimFire, endFire, type FireReason } from "./fires.js";
import type { Job } from "./job.js";
import type { JobReport } from "./run-job.js";
import { runOutcome } from "./run-outcome.js";
import type { RunOutcome } from "../metrics/families.js";
import { notifyJob, notifyThrownText, postNotify } from "./notify.js";
import { markSchedulerSeen, schedulerLastSeen } from "./scheduler-record.js";
import { ping as realPing, textfileMetrics, writeTextfile, type JobLog, type LogEvent, type PingKind } from "./telemetry.js";

export interface SchedulerOptions {
  readonly jobs: readonly Job[];
  /** The snapshot's database: fires are claimed in it, and the run history read from it. */
  readonly db: Database;
  readonly run: (job: Job, signal: AbortSignal) => Promise<JobReport>;
  readonly log: JobLog;
  readonly textfile?: string;
  readonly waitForSnapshotMs: number;
  readonly pollMs?: number;
  readonly now?: () => Date;
  /** Resolves at `at`, rejects when `signal` aborts: the timers and the wait for the snapshot (tests pass a fake clock with `now`). */
  readonly sleepUntil?: (at: Date, signal: AbortSignal) => Promise<void>;
  readonly ping?: (url: string, kind: PingKind) => Promise<string | undefined>;
  /** At start, run every job whose last success is older than its latest due time (`schedule --run-missed`). */
  readonly runMissed?: boolean;
  /** The chat webhook told of a failed job or new fields (notify.ts). */
  readonly notifyUrl?: string;
  /** How often the scheduler's record (scheduler-record.ts) is renewed while it runs; default a minute. */
  readonly recordEveryMs?: number;
  /** Told each run's end: its job, how it ended and its seconds (the `/metrics` histogram, scheduler-metrics.ts). */
  readonly onOutcome?: (job: string, outcome: RunOutcome, seconds: number) => void;
  /** After a sync job succeeded: the history retention (retention.ts), its log line. */
  readonly retain?: () => LogEvent | Promise<LogEvent>;
}

/** How a fire ended: the run's status, or why it did not run. */
export type FireOutcome = RunOutcome | "taken" | "overlap" | "stopped";

export class Scheduler {
  private readonly timers: Promise<void>[] = [];
  private readonly stopping = new AbortController();
  private readonly running = new Set<string>();
  private readonly inFlight = new Set<Promise<FireOutcome>>();
  private readonly now: () => Date;
  private recordTimer: NodeJS.Timeout | undefined;

  constructor(private readonly o: SchedulerOptions) {
    this.now = o.now ?? (() => new Date());
  }

  get enabled(): Job[] {
    return this.o.jobs.filter((j) => j.enabled);
  }

  /**
   * Say what runs now and when each job fires next, record that a scheduler runs on this snapshot,
   * schedule every enabled job, then run the missed ones once each (in the background).
   */
  async start(): Promise<void> {
    const now = this.now();
    const lastSeen = schedulerLastSeen(this.o.db);
    const decisions = decideAtStart(this.o.db, this.enabled, now, lastSeen, this.o.runMissed ?? false);
    markSchedulerSeen(this.o.db, now);
    this.recordTimer = setInterval(() => this.renewRecord(), this.o.recordEveryMs ?? 60_000).unref();
    this.o.log({
      event: "scheduler.started",
      jobs: this.enabled.map((j) => ({ job: j.name, schedule: j.schedule, timezone: j.timezone })),
      lastSeen: lastSeen?.toISOString() ?? null,
      message: startLine(lastSeen, this.o.runMissed ?? false),
    });
    for (const d of decisions) this.o.log(d.line);
    for (const job of this.enabled) this.timers.push(this.timer(job));
    void this.track(this.catchUp(decisions).then(() => "succeeded" as const));
  }

  /** The jobs decided at start, one after another, each for its latest due time. */
  private async catchUp(decisions: readonly StartDecision[]): Promise<void> {
    for (const d of decisions) {
      if (this.stopping.signal.aborted) return;
      if (d.due) await this.fire(d.job, d.due.at, "missed", d.moved);
    }
  }

  /** A record that cannot be written now (the snapshot busy) is written at the next renewal or at stop. */
  private renewRecord(): void {
    try {
      markSchedulerSeen(this.o.db, this.now());
    } catch (e) {
      this.o.log({ event: "scheduler.record.failed", error: e instanceof Error ? e.message : String(e) });
    }
  }

  /** Wait for each next fire of `job` and start it, until the scheduler stops. */
  private async timer(job: Job): Promise<void> {
    const sleepUntil = this.o.sleepUntil ?? realSleepUntil;
    for (let after = this.now(); !this.stopping.signal.aborted; ) {
      const next = nextFireAfter(job, after);
      if (!next) return;
      try {
        await sleepUntil(next.at, this.stopping.signal);
      } catch {
        return;
      }
      after = next.at;
      void this.track(this.fire(job, next.at, "scheduled", movedText(next, job.timezone)));
    }
  }

  /**
   * Run `job` for its scheduled time `slot` (to the minute), unless another process or fire has it.
   * `moved` says why the slot is not the job's local time (daylight saving).
   */
  async fire(job: Job, slot: Date, reason: FireReason, moved?: string): Promise<FireOutcome> {
    const at = new Date(Math.floor(slot.getTime() / 60_000) * 60_000);
    const base = { job: job.name, slot: at.toISOString(), reason, ...(moved ? { moved } : {}) };
    if (this.stopping.signal.aborted) return "stopped";
    if (this.running.has(job.name)) {
      this.o.log({ event: "job.skipped", ...base, why: "the job is still running from an earlier fire" });
      return "overlap";
    }
    this.running.add(job.name);
    let claimed = false;
    try {
      if (!claimFire(this.o.db, job.name, at, reason, this.now())) {
        this.o.log({ event: "job.skipped", ...base, why: "another scheduler took this fire" });
        return "taken";
      }
      claimed = true;
      return await this.runClaimed(job, at, base);
    } catch (e) {
      // Anything unexpected (the database locked past its timeout, a bug): this job's fire ends
      // failed, and its claim says so, so that no fire is left without an outcome; the scheduler
      // and the other jobs go on.
      const thrown = whyThrown(e);
      if (claimed) this.endThrown(job, at, thrown.why);
      this.o.log({ event: "job.failed", ...base, ...thrown });
      await this.tell(job, "fail");
      if (this.o.notifyUrl) this.notified(job, await postNotify(this.o.notifyUrl, notifyThrownText(job.name, thrown.why)));
      return "failed";
    } finally {
      this.running.delete(job.name);
    }
  }

  /** A claimed fire that threw: its row records the failure (a write that fails too is logged, never thrown). */
  private endThrown(job: Job, at: Date, why: string): void {
    try {
      endFire(this.o.db, job.name, at, `failed: ${why}`, null, this.now());
    } catch (e) {
      this.o.log({ event: "scheduler.record.failed", job: job.name, error: e instanceof Error ? e.message : String(e) });
    }
  }

  private async runClaimed(job: Job, at: Date, base: Record<string, unknown>): Promise<FireOutcome> {
    this.o.log({ event: "job.started", ...base });
    await this.tell(job, "start");
    // The wait for the snapshot is on the scheduler's clock (`now`, `sleepUntil`), as its timers are.
    const began = this.now().getTime();
    const waitedMs = () => this.now().getTime() - began;
    let report: JobReport;
    let waited = false;
    for (;;) {
      report = await this.o.run(job, this.stopping.signal);
      if (report.status !== "busy" || this.stopping.signal.aborted || waitedMs() >= this.o.waitForSnapshotMs) break;
      if (!waited) this.o.log({ event: "job.waiting", ...base, why: "another run holds the snapshot", upToMs: this.o.waitForSnapshotMs });
      waited = true;
      try {
        await (this.o.sleepUntil ?? realSleepUntil)(new Date(this.now().getTime() + (this.o.pollMs ?? 15_000)), this.stopping.signal);
      } catch {
        break;
      }
    }
    const outcome = runOutcome(report);
    // `run_id` names a sync run; a report's id is in its own table (report-runs.ts).
    const runId = "reconcile" in report ? null : report.runId;
    endFire(this.o.db, job.name, at, outcome === "busy" ? `skipped: another run held the snapshot for ${Math.round(waitedMs() / 1000)} s` : outcome, runId, this.now());
    this.o.onOutcome?.(job.name, outcome, report.durationMs / 1000);
    const why = outcome === "busy" ? "another run held the snapshot past the wait" : outcome === "failed" ? whyFailed(report) : undefined;
    this.o.log({
      event: outcome === "succeeded" ? "job.succeeded" : outcome === "busy" ? "job.skipped" : `job.${outcome}`,
      ...base,
      ...(why ? { why } : {}),
      ...("reconcile" in report ? { reportId: report.runId } : { runId: report.runId }),
      durationMs: report.durationMs,
      resources: report.resources,
      ...(report.error ? { error: { code: report.error.code, message: redact(report.error.message) } } : {}),
      ...(report.deliveries?.length ? { sinks: sinksReceived(report.deliveries) } : {}),
      ...("reconcile" in report ? { reconcile: report.reconcile } : {}),
    });
    if (outcome === "succeeded" && !("reconcile" in report) && this.o.retain) this.o.log({ ...(await this.o.retain()), job: job.name });
    this.refreshTextfile();
    await this.tell(job, outcome === "succeeded" ? "success" : "fail");
    this.notified(job, await notifyJob(this.o.notifyUrl, job.name, report));
    return outcome;
  }

  /** Stop scheduling, interrupt the run in progress (`reason` is recorded), wait for it to end. */
  async stop(reason: string): Promise<void> {
    this.stopping.abort(Object.assign(new Error(reason), { code: "INTERRUPTED" }));
    clearInterval(this.recordTimer);
    await Promise.allSettled([...this.timers, ...this.inFlight]);
    this.renewRecord();
    this.o.log({ event: "scheduler.stopped", why: reason });
  }

  /** Resolves when every fire started so far has ended (tests). */
  async idle(): Promise<void> {
    while (this.inFlight.size > 0) await Promise.allSettled([...this.inFlight]);
  }

  private track(p: Promise<FireOutcome>): Promise<FireOutcome> {
    this.inFlight.add(p);
    void p.finally(() => this.inFlight.delete(p));
    return p;
  }

  private refreshTextfile(): void {
    if (!this.o.textfile) return;
    try {
      writeTextfile(this.o.textfile, textfileMetrics(this.o.db, this.o.jobs));
    } catch (e) {
      this.o.log({ event: "textfile.failed", path: this.o.textfile, error: e instanceof Error ? e.message : String(e) });
    }
  }

  private notified(job: Job, problem: string | undefined): void {
    if (problem) this.o.log({ event: "notify.failed", job: job.name, error: problem });
  }

  private async tell(job: Job, kind: PingKind): Promise<void> {
    if (!job.heartbeatUrl) return;
    const problem = await (this.o.ping ?? realPing)(job.heartbeatUrl, kind);
    if (problem) this.o.log({ event: "heartbeat.failed", job: job.name, ping: kind, error: problem });
  }
}

/** Sleep in steps of at most a minute, so a clock that jumped (a suspended host) is caught up soon. */
async function realSleepUntil(at: Date, signal: AbortSignal): Promise<void> {
  for (let left = at.getTime() - Date.now(); left > 0; left = at.getTime() - Date.now()) {
    await sleep(Math.min(left, 60_000), undefined, { signal });
  }
}

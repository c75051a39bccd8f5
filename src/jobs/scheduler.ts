/**
 * `benefits-sync schedule`: the enabled jobs on node-cron, in their time zones.
 *
 * - No overlap: a job still running from its last fire skips the next one (and says so); other
 *   jobs wait for the snapshot, since one run at a time holds it (the run lease), polling up to
 *   `waitForSnapshotMs`, then skip that fire and say so.
 * - Once per fire across schedulers: each fire is claimed in the snapshot (fires.ts) before it
 *   runs, so a second scheduler on the same file skips it.
 * - Missed runs: at start, a job whose last success began before its latest scheduled time runs
 *   once (not once per missed slot).
 * - Stop (SIGINT, SIGTERM): no new fire; the run in progress stops fetching, commits the page in
 *   hand and is recorded as interrupted (failed, code INTERRUPTED; the next run resumes it).
 * - A failing job is logged, written to the textfile and pinged as failed; the others go on.
 */
import type { Database } from "better-sqlite3";
import { createTask, type ScheduledTask } from "node-cron";
import { setTimeout as sleep } from "node:timers/promises";
import { claimFire, endFire, lastSuccess, type FireReason } from "./fires.js";
import type { Job } from "./job.js";
import { previousFire } from "./registry.js";
import type { JobReport } from "./run-job.js";
import { ping as realPing, textfileMetrics, writeTextfile, type JobLog, type PingKind } from "./telemetry.js";

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
  readonly ping?: (url: string, kind: PingKind) => Promise<string | undefined>;
}

/** How a fire ended: the run's status, or why it did not run. */
export type FireOutcome = "succeeded" | "failed" | "interrupted" | "taken" | "overlap" | "busy" | "stopped";

export class Scheduler {
  private readonly tasks = new Map<string, ScheduledTask>();
  private readonly stopping = new AbortController();
  private readonly running = new Set<string>();
  private readonly inFlight = new Set<Promise<FireOutcome>>();
  private readonly now: () => Date;

  constructor(private readonly o: SchedulerOptions) {
    this.now = o.now ?? (() => new Date());
  }

  get enabled(): Job[] {
    return this.o.jobs.filter((j) => j.enabled);
  }

  /** The node-cron task of each enabled job, by name (tests execute them by hand). */
  get cronTasks(): ReadonlyMap<string, ScheduledTask> {
    return this.tasks;
  }

  /** Schedule every enabled job, then run the missed ones once (in the background). */
  async start(): Promise<void> {
    for (const job of this.enabled) {
      const task = createTask(job.schedule, (ctx) => this.track(this.fire(job, ctx.date ?? ctx.triggeredAt, "scheduled")), {
        timezone: job.timezone,
        name: job.name,
      });
      this.tasks.set(job.name, task);
      await task.start();
    }
    this.o.log({ event: "scheduler.started", jobs: this.enabled.map((j) => ({ job: j.name, schedule: j.schedule, timezone: j.timezone })) });
    void this.track(this.catchUp().then(() => "succeeded" as const));
  }

  /** Each enabled job whose last success began before its latest scheduled time runs once. */
  async catchUp(): Promise<void> {
    for (const job of this.enabled) {
      if (this.stopping.signal.aborted) return;
      const due = previousFire(job, this.now());
      if (!due) continue;
      const ok = lastSuccess(this.o.db, job.name);
      if (ok && ok >= due) continue;
      this.o.log({ event: "job.missed", job: job.name, due: due.toISOString(), lastSuccess: ok?.toISOString() ?? null });
      await this.fire(job, due, "missed");
    }
  }

  /** Run `job` for its scheduled time `slot` (to the minute), unless another process or fire has it. */
  async fire(job: Job, slot: Date, reason: FireReason): Promise<FireOutcome> {
    const at = new Date(Math.floor(slot.getTime() / 60_000) * 60_000);
    const base = { job: job.name, slot: at.toISOString(), reason };
    if (this.stopping.signal.aborted) return "stopped";
    if (this.running.has(job.name)) {
      this.o.log({ event: "job.skipped", ...base, why: "the job is still running from an earlier fire" });
      return "overlap";
    }
    this.running.add(job.name);
    try {
      if (!claimFire(this.o.db, job.name, at, reason, this.now())) {
        this.o.log({ event: "job.skipped", ...base, why: "another scheduler took this fire" });
        return "taken";
      }
      return await this.runClaimed(job, at, base);
    } catch (e) {
      // Anything unexpected (the database locked past its timeout, a bug): this job's fire ends
      // failed; the scheduler and the other jobs go on.
      const message = e instanceof Error ? e.message : String(e);
      this.o.log({ event: "job.failed", ...base, error: { code: (e as { code?: string }).code ?? "ERROR", message } });
      await this.tell(job, "fail");
      return "failed";
    } finally {
      this.running.delete(job.name);
    }
  }

  private async runClaimed(job: Job, at: Date, base: Record<string, unknown>): Promise<FireOutcome> {
    this.o.log({ event: "job.started", ...base });
    await this.tell(job, "start");
    const began = Date.now();
    let report: JobReport;
    let waited = false;
    for (;;) {
      report = await this.o.run(job, this.stopping.signal);
      if (report.status !== "busy" || this.stopping.signal.aborted || Date.now() - began >= this.o.waitForSnapshotMs) break;
      if (!waited) this.o.log({ event: "job.waiting", ...base, why: "another run holds the snapshot", upToMs: this.o.waitForSnapshotMs });
      waited = true;
      try {
        await sleep(this.o.pollMs ?? 15_000, undefined, { signal: this.stopping.signal });
      } catch {
        break;
      }
    }
    const interrupted = report.error?.code === "INTERRUPTED";
    const deliveryFailed = report.deliveries?.some((d) => d.outcome.status === "failed") ?? false;
    const outcome: FireOutcome =
      report.status === "busy" ? "busy" : interrupted ? "interrupted" : report.status === "succeeded" && !deliveryFailed ? "succeeded" : "failed";
    endFire(this.o.db, job.name, at, outcome === "busy" ? `skipped: another run held the snapshot for ${Math.round((Date.now() - began) / 1000)} s` : outcome, report.runId, this.now());
    this.o.log({
      event: outcome === "succeeded" ? "job.succeeded" : outcome === "busy" ? "job.skipped" : `job.${outcome}`,
      ...base,
      ...(outcome === "busy" ? { why: "another run held the snapshot past the wait" } : {}),
      runId: report.runId,
      durationMs: report.durationMs,
      resources: report.resources,
      ...(report.error ? { error: report.error } : {}),
      ...(deliveryFailed ? { deliveries: report.deliveries?.map((d) => ({ output: d.target, status: d.outcome.status, ...(d.outcome.error ? { error: d.outcome.error } : {}) })) } : {}),
    });
    this.refreshTextfile();
    await this.tell(job, outcome === "succeeded" ? "success" : "fail");
    return outcome;
  }

  /** Stop scheduling, interrupt the run in progress (`reason` is recorded), wait for it to end. */
  async stop(reason: string): Promise<void> {
    for (const t of this.tasks.values()) await t.stop();
    this.stopping.abort(Object.assign(new Error(reason), { code: "INTERRUPTED" }));
    await Promise.allSettled([...this.inFlight]);
    for (const t of this.tasks.values()) await t.destroy();
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

  private async tell(job: Job, kind: PingKind): Promise<void> {
    if (!job.heartbeatUrl) return;
    const problem = await (this.o.ping ?? realPing)(job.heartbeatUrl, kind);
    if (problem) this.o.log({ event: "heartbeat.failed", job: job.name, ping: kind, error: problem });
  }
}

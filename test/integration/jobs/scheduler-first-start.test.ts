/**
 * What the scheduler runs when it starts, on an injected clock (no timer ever fires here: the
 * clock never reaches a next fire), with real runs (the sandbox over loopback, a real snapshot):
 *
 * - the first start ever on a snapshot runs nothing, and says each job's next fire;
 * - a restart runs, once, each job whose fire fell while the scheduler was stopped (by its own
 *   record in the snapshot), saying which fire, and nothing that was not due since;
 * - `--run-missed` runs each job whose last success is older than its latest due time, even on a
 *   first start, and not a job that is not behind.
 *
 * The clock is in 2036 where a run must count as before its due time (real runs record the real
 * time), and in early 2026 where it must count as after.
 */
import type { Database } from "better-sqlite3";
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { loadConfig } from "../../../src/config/load.js";
import type { Config } from "../../../src/config/schema.js";
import type { Job } from "../../../src/jobs/job.js";
import { effectiveJobs } from "../../../src/jobs/registry.js";
import { runJob } from "../../../src/jobs/run-job.js";
import { Scheduler } from "../../../src/jobs/scheduler.js";
import { schedulerLastSeen } from "../../../src/jobs/scheduler-record.js";
import type { LogEvent } from "../../../src/jobs/telemetry.js";
import { startSandbox, type Sandbox } from "../../../src/sandbox/index.js";
import { openDatabase } from "../../../src/store/file/database.js";
import { waitUntil } from "../../helpers/wait.js";

const PII = "first-start-test-pii-key-0123456";
let sb: Sandbox;
let dir: string;

beforeAll(async () => {
  sb = await startSandbox({ members: 20, groups: 2, seed: 11 });
  dir = mkdtempSync(join(tmpdir(), "bsync-first-start-"));
});
afterAll(async () => {
  await sb?.close();
  if (dir) rmSync(dir, { recursive: true, force: true });
});

const job = (name: string, schedule: string, resources: Job["resources"]): Job => ({ name, description: name, schedule, timezone: "UTC", resources, enabled: true, sinks: [] });

interface Setup {
  readonly config: Config;
  readonly dbPath: string;
  readonly cwd: string;
}

function setup(name: string): Setup {
  const cwd = mkdtempSync(join(dir, `${name}-`));
  const dbPath = join(cwd, "snap.db");
  const config = loadConfig({ env: { BENEFITS_DB: dbPath, BENEFITS_PII_KEY: PII, BENEFITS_BASE_URL: sb.baseUrl, BENEFITS_API_KEY: sb.keys.full }, cwd });
  return { config, dbPath, cwd };
}

/** A clock the test sets; the scheduler's timers wait on it until stopped (it never reaches them). */
function clock(iso: string): { now: () => Date; set: (iso: string) => void; sleepUntil: (at: Date, signal: AbortSignal) => Promise<void> } {
  let t = Date.parse(iso);
  return {
    now: () => new Date(t),
    set: (to) => void (t = Date.parse(to)),
    sleepUntil: (_at, signal) => new Promise((_, reject) => signal.addEventListener("abort", () => reject(signal.reason))),
  };
}

function scheduler(t: Setup, jobs: Job[], events: LogEvent[], c: ReturnType<typeof clock>, runMissed = false, recordEveryMs?: number): { s: Scheduler; db: Database } {
  const db = openDatabase(t.dbPath);
  const s = new Scheduler({
    jobs,
    db,
    log: (e) => events.push(e),
    waitForSnapshotMs: 60_000,
    pollMs: 25,
    now: c.now,
    sleepUntil: c.sleepUntil,
    runMissed,
    ...(recordEveryMs ? { recordEveryMs } : {}),
    run: (j, signal) => runJob(j, { config: t.config, env: {}, cwd: t.cwd, signal, service: { baseUrl: sb.baseUrl, apiKey: sb.keys.full } }),
  });
  return { s, db };
}

/** The start's lines: the scheduler's, then one per job. */
const startLines = (events: LogEvent[]) => events.filter((e) => ["scheduler.started", "job.next", "job.missed"].includes(e.event)).map((e) => `${e.event} ${String(e.message)}`);
const runsOf = (db: Database) => db.prepare("SELECT job, status FROM _runs ORDER BY run_id").all();

describe("the scheduler's first start", () => {
  it("runs nothing on a snapshot no scheduler ever ran on, and says each job's next fire", async () => {
    const t = setup("first");
    const c = clock("2036-11-26T10:00:00Z");
    const events: LogEvent[] = [];
    const { s, db } = scheduler(t, effectiveJobs(t.config), events, c);
    try {
      await s.start();
      await s.idle();
      expect(startLines(events)).toEqual([
        "scheduler.started first start of a scheduler on this snapshot: nothing was missed, so nothing runs now (`schedule --run-missed` runs each job that is behind its schedule)",
        "job.next nightly-claims-export: never ran; next 2036-11-27 02:00 UTC",
        "job.next hourly-member-sync: never ran; next 2036-11-26 10:15 UTC",
        "job.next daily-groups-designs: never ran; next 2036-11-27 01:30 UTC",
        "job.next weekly-full-walk: never ran; next 2036-11-30 03:00 UTC",
        "job.next monthly-reconcile: never ran; next 2036-12-01 06:00 UTC",
      ]);
      expect(runsOf(db)).toEqual([]);
      expect(db.prepare("SELECT COUNT(*) FROM _job_fires").pluck().get()).toBe(0);
    } finally {
      await s.stop("test over");
      db.close();
    }
  });

  it("after a stop, runs once each fire missed while stopped, says which, and runs nothing that was not due since", async () => {
    const t = setup("restart");
    const weekly = job("weekly", "0 3 * * 0", ["designs"]);
    const monthly = job("monthly", "0 6 1 * *", ["groups"]);
    const c = clock("2036-11-26T10:00:00Z");
    const first: LogEvent[] = [];
    const a = scheduler(t, [weekly, monthly], first, c);
    await a.s.start();
    await a.s.idle();
    c.set("2036-11-29T12:00:00Z"); // Saturday: stopped before Sunday's 03:00
    await a.s.stop("stopped for the weekend");
    a.db.close();

    c.set("2036-12-01T05:00:00Z"); // Monday, before the monthly job's 06:00
    const second: LogEvent[] = [];
    const b = scheduler(t, [weekly, monthly], second, c);
    try {
      await b.s.start();
      await b.s.idle();
      expect(startLines(second)).toEqual([
        "scheduler.started the scheduler last ran on this snapshot until 2036-11-29 12:00 UTC: fires due since then run now, once per job",
        "job.missed weekly: missed 2036-11-30 03:00 UTC while the scheduler was stopped, running now",
        "job.next monthly: never ran; next 2036-12-01 06:00 UTC",
      ]);
      expect(runsOf(b.db)).toEqual([{ job: "weekly", status: "succeeded" }]);
      expect(b.db.prepare("SELECT job, slot, reason, outcome FROM _job_fires").all()).toEqual([
        { job: "weekly", slot: "2036-11-30T03:00:00.000Z", reason: "missed", outcome: "succeeded" },
      ]);
    } finally {
      await b.s.stop("test over");
      b.db.close();
    }

    // Started again at once: nothing was missed since this stop.
    const third: LogEvent[] = [];
    const d = scheduler(t, [weekly, monthly], third, c);
    try {
      await d.s.start();
      await d.s.idle();
      const lines = startLines(third);
      expect(lines[0]).toBe("scheduler.started the scheduler last ran on this snapshot until 2036-12-01 05:00 UTC: fires due since then run now, once per job");
      expect(lines[1]).toMatch(/^job\.next weekly: last succeeded \d{4}-\d\d-\d\d \d\d:\d\d(:\d\d)? UTC; next 2036-12-07 03:00 UTC$/);
      expect(lines.slice(2)).toEqual(["job.next monthly: never ran; next 2036-12-01 06:00 UTC"]);
      expect(runsOf(d.db)).toEqual([{ job: "weekly", status: "succeeded" }]);
    } finally {
      await d.s.stop("test over");
      d.db.close();
    }
  });

  it("with --run-missed, runs each job whose last success is older than its latest due time, first start or not", async () => {
    const t = setup("run-missed");
    const weekly = job("weekly", "0 3 * * 0", ["designs"]);
    const monthly = job("monthly", "0 6 1 * *", ["groups"]);
    // The monthly job ran by hand (now, which is after its due time on 2026-01-01): not behind.
    const byHand = await runJob(monthly, { config: t.config, env: {}, cwd: t.cwd, service: { baseUrl: sb.baseUrl, apiKey: sb.keys.full } });
    expect(byHand.status).toBe("succeeded");
    const c = clock("2026-01-15T10:00:00Z");
    const events: LogEvent[] = [];
    const { s, db } = scheduler(t, [weekly, monthly], events, c, true);
    try {
      await s.start();
      await s.idle();
      const lines = startLines(events);
      expect(lines.slice(0, 2)).toEqual([
        "scheduler.started first start of a scheduler on this snapshot; --run-missed: each job whose last success is older than its latest due time runs now, once",
        "job.missed weekly: never succeeded; latest due 2026-01-11 03:00 UTC; running now (--run-missed)",
      ]);
      expect(lines[2]).toMatch(/^job\.next monthly: last succeeded \d{4}-\d\d-\d\d \d\d:\d\d(:\d\d)? UTC; next 2026-02-01 06:00 UTC$/);
      expect(runsOf(db)).toEqual([
        { job: "monthly", status: "succeeded" },
        { job: "weekly", status: "succeeded" },
      ]);
    } finally {
      await s.stop("test over");
      db.close();
    }
  });

  it("renews its record while it runs, so a crash loses at most one renewal's worth of it", async () => {
    const t = setup("renew");
    const c = clock("2036-11-26T10:00:00Z");
    const { s, db } = scheduler(t, [job("weekly", "0 3 * * 0", ["designs"])], [], c, false, 10);
    try {
      await s.start();
      expect(schedulerLastSeen(db)?.toISOString()).toBe("2036-11-26T10:00:00.000Z");
      c.set("2036-11-27T08:30:00Z");
      await waitUntil("the record's renewal", () => schedulerLastSeen(db)?.toISOString() === "2036-11-27T08:30:00.000Z");
    } finally {
      await s.stop("test over");
      db.close();
    }
  });
});

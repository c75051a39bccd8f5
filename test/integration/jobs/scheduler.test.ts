/**
 * The scheduler against the sandbox over loopback and a real snapshot file. Fires are started by
 * hand (`fire()`), never by waiting for wall-clock minutes (the timer itself, on a fake clock
 * across daylight saving: scheduler-clock.test.ts); two schedulers' waits for the snapshot are on
 * a clock the test drives (helpers/driven-clock.ts), never on wall-clock time:
 *
 * - two schedulers on one database run each job once per fire (the catch-up at start included);
 * - a scheduler restarted after a long gap runs a missed job once, not once per missed slot;
 * - a failing job reports failure in the textfile and the heartbeat, and the others go on;
 *
 * The CLI's commands as their own processes (signals, --quiet, the window's notices):
 * test/e2e/scheduler-cli.test.ts.
 */
import type { Database } from "better-sqlite3";
import { mkdtempSync, readFileSync, rmSync } from "node:fs";
import { createServer, type Server } from "node:http";
import type { AddressInfo } from "node:net";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { loadConfig } from "../../../src/config/load.js";
import type { Config } from "../../../src/config/schema.js";
import type { Job } from "../../../src/jobs/job.js";
import { runJob } from "../../../src/jobs/run-job.js";
import { Scheduler } from "../../../src/jobs/scheduler.js";
import type { LogEvent } from "../../../src/jobs/telemetry.js";
import { startSandbox, type Sandbox } from "../../../src/sandbox/index.js";
import { openDatabase } from "../../../src/store/file/database.js";
import { DrivenClock } from "../../helpers/driven-clock.js";

const PII = "scheduler-test-pii-key-0123456789";
let sb: Sandbox;
let dir: string;
let hooks: Server;
let hookUrl: string;
const pings: string[] = [];

beforeAll(async () => {
  sb = await startSandbox({ members: 120, groups: 3, seed: 31 });
  dir = mkdtempSync(join(tmpdir(), "bsync-sched-"));
  hooks = createServer((req, res) => {
    pings.push(req.url ?? "");
    res.end("OK");
  });
  await new Promise<void>((r) => hooks.listen(0, "127.0.0.1", r));
  hookUrl = `http://127.0.0.1:${(hooks.address() as AddressInfo).port}/ping`;
});
afterAll(async () => {
  await sb?.close();
  await new Promise((r) => hooks?.close(r));
  if (dir) rmSync(dir, { recursive: true, force: true });
});

const job = (name: string, resources: Job["resources"], extra: Partial<Job> = {}): Job => ({
  name,
  description: name,
  schedule: "0 2 * * *",
  timezone: "UTC",
  resources,
  enabled: true,
  sinks: [],
  ...extra,
});

function setup(name: string): { config: Config; dbPath: string; cwd: string } {
  const cwd = mkdtempSync(join(dir, `${name}-`));
  const dbPath = join(cwd, "snap.db");
  const config = loadConfig({ env: { BENEFITS_DB: dbPath, BENEFITS_PII_KEY: PII, BENEFITS_BASE_URL: sb.baseUrl, BENEFITS_API_KEY: sb.keys.full }, cwd });
  return { config, dbPath, cwd };
}

/** Runs of any scheduler of this file in progress now (a driven clock moves only when there is none). */
let running = 0;

function scheduler(t: { config: Config; dbPath: string; cwd: string }, jobs: Job[], events: LogEvent[], extra: { now?: () => Date; clock?: DrivenClock; waitForSnapshotMs?: number; pollMs?: number; textfile?: string; apiKeyOf?: (j: Job) => string; runMissed?: boolean } = {}): { s: Scheduler; db: Database } {
  const db = openDatabase(t.dbPath);
  const s = new Scheduler({
    jobs,
    db,
    log: (e) => events.push(e),
    waitForSnapshotMs: extra.waitForSnapshotMs ?? WAIT_FOR_SNAPSHOT_MS,
    pollMs: extra.pollMs ?? 25,
    ...(extra.now ? { now: extra.now } : {}),
    ...(extra.clock ? { now: extra.clock.now, sleepUntil: extra.clock.sleepUntil } : {}),
    ...(extra.textfile ? { textfile: extra.textfile } : {}),
    ...(extra.runMissed ? { runMissed: true } : {}),
    run: async (j, signal) => {
      running++;
      try {
        return await runJob(j, { config: t.config, env: {}, cwd: t.cwd, signal, service: { baseUrl: sb.baseUrl, apiKey: extra.apiKeyOf?.(j) ?? sb.keys.full } });
      } finally {
        running--;
      }
    },
  });
  return { s, db };
}
const WAIT_FOR_SNAPSHOT_MS = 60_000;

const runsOf = (db: Database, name: string) => db.prepare("SELECT status FROM _runs WHERE job = ? ORDER BY run_id").pluck().all(name) as string[];

/** Read the snapshot file on a connection of its own, closed after. */
function peek<T>(path: string, read: (db: Database) => T): T {
  const db = openDatabase(path);
  try {
    return read(db);
  } finally {
    db.close();
  }
}


describe("the scheduler", () => {
  it("two schedulers on one database run each job once per fire, the catch-up at start included", async () => {
    const t = setup("two");
    const jobs = [job("groups-designs", ["designs", "groups"]), job("members", ["members"])];
    const ea: LogEvent[] = [];
    const eb: LogEvent[] = [];
    // One clock for both, driven by the test: a scheduler that finds the snapshot held waits on it
    // (its poll), and it moves only once no run is in progress. A wait of 60 s by this clock is a
    // few polls, however long a loaded machine takes over the run it waits for.
    const noon = new Date();
    noon.setUTCHours(12, 0, 0, 0); // far from the jobs' 02:00: their timers never come due here
    const clock = new DrivenClock(noon.getTime());
    const a = scheduler(t, jobs, ea, { runMissed: true, clock });
    const b = scheduler(t, jobs, eb, { runMissed: true, clock });
    const bothIdle = () => clock.drive(Promise.all([a.s.idle(), b.s.idle()]), () => running, WAIT_FOR_SNAPSHOT_MS);
    try {
      // Both start (--run-missed) on a snapshot that never ran these jobs: each job runs once.
      await Promise.all([a.s.start(), b.s.start()]);
      await bothIdle();
      const failed = () => JSON.stringify([...ea, ...eb].filter((e) => e.event === "job.failed"));
      for (const j of jobs) expect(runsOf(a.db, j.name), failed()).toEqual(["succeeded"]);
      // A fire of each job's slot (now), in both schedulers at once, as their timers would.
      const slot = clock.now();
      const [fromA, fromB] = [ea.length, eb.length];
      await clock.drive(Promise.all(jobs.flatMap((j) => [a.s.fire(j, slot, "scheduled"), b.s.fire(j, slot, "scheduled")])), () => running, WAIT_FOR_SNAPSHOT_MS);
      await bothIdle();
      for (const j of jobs) expect(runsOf(a.db, j.name), failed()).toEqual(["succeeded", "succeeded"]);
      const fires = a.db.prepare("SELECT job, reason, outcome FROM _job_fires ORDER BY job, slot").all();
      expect(fires, failed()).toEqual([
        { job: "groups-designs", reason: "missed", outcome: "succeeded" },
        { job: "groups-designs", reason: "scheduled", outcome: "succeeded" },
        { job: "members", reason: "missed", outcome: "succeeded" },
        { job: "members", reason: "scheduled", outcome: "succeeded" },
      ]);
      // Of each job's two executions of one fire, one ran and the other said why it did not.
      const taken = [...ea.slice(fromA), ...eb.slice(fromB)].filter((e) => e.event === "job.skipped" && e.why === "another scheduler took this fire");
      expect(taken.map((e) => e.job).sort()).toEqual(["groups-designs", "members"]);
    } finally {
      await a.s.stop("test over");
      await b.s.stop("test over");
      a.db.close();
      b.db.close();
    }
  });

  it("a claimed fire whose run throws ends failed in its row, with why: no fire is left without an outcome", async () => {
    const t = setup("thrown");
    const events: LogEvent[] = [];
    const db = openDatabase(t.dbPath);
    // What a run's end can throw when another scheduler's run holds the file past the busy timeout.
    const locked = Object.assign(new Error("database is locked"), { code: "SQLITE_BUSY" });
    const s = new Scheduler({ jobs: [job("members", ["members"])], db, log: (e) => events.push(e), waitForSnapshotMs: 0, run: () => Promise.reject(locked) });
    try {
      const slot = new Date(Math.floor(Date.now() / 60_000) * 60_000);
      expect(await s.fire(job("members", ["members"]), slot, "scheduled")).toBe("failed");
      const row = db.prepare("SELECT outcome, finished_at FROM _job_fires WHERE job = 'members'").get() as { outcome: string | null; finished_at: string | null };
      expect(row.outcome).toBe("failed: the fire failed before its run ended (SQLITE_BUSY): database is locked");
      expect(row.finished_at).not.toBeNull();
      expect(events.filter((e) => e.event === "job.failed").map((e) => e.why)).toEqual([row.outcome!.slice("failed: ".length)]);
      // The fire is not run again for that slot, by this scheduler or another.
      expect(await s.fire(job("members", ["members"]), slot, "scheduled")).toBe("taken");
    } finally {
      await s.stop("test over");
      db.close();
    }
  });

  it("a fire that finds the snapshot held waits by the scheduler's clock, polling, and skips once the wait is over, saying so", async () => {
    const t = setup("held");
    const nightly = job("nightly", ["designs"]);
    const events: LogEvent[] = [];
    // Ten minutes by the scheduler's clock, a poll a minute (the CLI's defaults are of that order):
    // a wait in wall-clock time would outlast the clock's wait for an event.
    const clock = new DrivenClock(Date.parse("2026-03-10T12:00:00Z"));
    const { s, db } = scheduler(t, [nightly], events, { clock, waitForSnapshotMs: 600_000, pollMs: 60_000 });
    // Another process's run, alive by its lease (wall-clock time, as runs read it) for an hour.
    const held = db
      .prepare("INSERT INTO _runs (job, status, started_at, options, pid, host, fresh, owner, lease_until) VALUES ('sync', 'running', ?, '{}', 1, 'other-host', '[]', 'x', ?)")
      .run(new Date().toISOString(), new Date(Date.now() + 3_600_000).toISOString()).lastInsertRowid;
    const counted = (e: LogEvent) => e.event === "job.started" || e.event === "job.waiting";
    try {
      const outcome = await clock.drive(s.fire(nightly, clock.now(), "scheduled"), () => running, 60_000 + 1);
      expect(outcome).toBe("busy");
      expect(clock.now().toISOString()).toBe("2026-03-10T12:10:00.000Z");
      expect(events.filter(counted).map((e) => e.event)).toEqual(["job.started", "job.waiting"]);
      expect(events.at(-1)).toMatchObject({ event: "job.skipped", why: "another run held the snapshot past the wait" });
      expect(db.prepare("SELECT outcome FROM _job_fires WHERE job = 'nightly'").pluck().get()).toBe("skipped: another run held the snapshot for 600 s");
      // Every attempt was told busy: no run of ours was recorded.
      expect(db.prepare("SELECT COUNT(*) FROM _runs WHERE run_id <> ?").pluck().get(held)).toBe(0);
    } finally {
      await s.stop("done");
      db.close();
    }
  });

  it("a scheduler restarted after a long gap runs a missed job once, and one that is not due not at all", async () => {
    const t = setup("gap");
    const nightly = job("nightly", ["designs"]);
    const hourly = job("hourly", ["groups"], { schedule: "0 * * * *" });
    const events: LogEvent[] = [];
    const first = scheduler(t, [nightly, hourly], events, { runMissed: true });
    await first.s.start();
    await first.s.idle();
    await first.s.stop("restart");
    first.db.close();
    expect(peek(t.dbPath, (db) => runsOf(db, "nightly"))).toEqual(["succeeded"]);
    // Ten days later: ten nightly slots and 240 hourly ones were missed; each job runs once.
    const later = () => new Date(Date.now() + 10 * 86_400_000);
    const second = scheduler(t, [nightly, hourly], events, { now: later });
    await second.s.start();
    await second.s.idle();
    expect(runsOf(second.db, "nightly")).toEqual(["succeeded", "succeeded"]);
    expect(runsOf(second.db, "hourly")).toEqual(["succeeded", "succeeded"]);
    await second.s.stop("restart");
    // Started again at once (no gap): nothing is due.
    const third = scheduler(t, [nightly, hourly], events);
    await third.s.start();
    await third.s.idle();
    await third.s.stop("done");
    expect(runsOf(third.db, "nightly")).toEqual(["succeeded", "succeeded"]);
    expect(runsOf(third.db, "hourly")).toEqual(["succeeded", "succeeded"]);
    expect(events.filter((e) => e.event === "job.missed").map((e) => e.job)).toEqual(["nightly", "hourly", "nightly", "hourly"]);
    second.db.close();
    third.db.close();
  });

  it("a failing job reports failure in the textfile and the heartbeat, and does not stop the other jobs", async () => {
    const t = setup("fail");
    const textfile = join(t.cwd, "benefits_sync.prom");
    const broken = job("broken", ["designs"], { heartbeatUrl: `${hookUrl}/broken` });
    const fine = job("fine", ["groups"], { heartbeatUrl: `${hookUrl}/fine` });
    const events: LogEvent[] = [];
    // The broken job's key is refused by the service (401): a real failed run.
    const { s, db } = scheduler(t, [broken, fine], events, { textfile, runMissed: true, apiKeyOf: (j) => (j.name === "broken" ? "not-a-valid-key" : sb.keys.full) });
    pings.length = 0;
    try {
      await s.start();
      await s.idle();
      expect(runsOf(db, "broken")).toEqual(["failed"]);
      expect(runsOf(db, "fine")).toEqual(["succeeded"]);
      expect(pings.sort()).toEqual(["/ping/broken/fail", "/ping/broken/start", "/ping/fine", "/ping/fine/start"]);
      const prom = readFileSync(textfile, "utf8");
      expect(prom).toContain('benefits_sync_job_last_run_succeeded{job="broken"} 0');
      expect(prom).toContain('benefits_sync_job_last_run_succeeded{job="fine"} 1');
      expect(prom).toMatch(/benefits_sync_job_last_success_timestamp_seconds\{job="fine"\} \d{10}/);
      expect(prom).not.toMatch(/last_success_timestamp_seconds\{job="broken"\}/);
      expect(prom).toMatch(/benefits_sync_job_last_success_records\{job="fine",resource="groups",what="inserted"\} 3/);
      expect(events.find((e) => e.event === "job.failed")).toMatchObject({ job: "broken", error: { code: expect.any(String) } });
      expect(JSON.stringify(events)).not.toContain("not-a-valid-key");
      // The next fire of the broken job runs again (the failure did not stop its schedule).
      expect(await s.fire(broken, new Date(Date.now() + 3_600_000), "scheduled")).toBe("failed");
      expect(runsOf(db, "broken")).toEqual(["failed", "failed"]);
    } finally {
      await s.stop("done");
      db.close();
    }
  });
});

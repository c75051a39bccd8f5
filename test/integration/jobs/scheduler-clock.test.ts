/**
 * The scheduler's own timer on a fake clock, across the 2026 daylight-saving changes in
 * America/New_York, with real runs (the sandbox over loopback, a real snapshot file): a 02:30 job
 * fires once on the spring-forward day, at 03:00 EDT, and its log says the fire was moved; a 01:30
 * job fires once on the fall-back day. The clock moves only when the scheduler waits on it, to the
 * time it waits for.
 */
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { loadConfig } from "../../../src/config/load.js";
import type { Job } from "../../../src/jobs/job.js";
import { runJob } from "../../../src/jobs/run-job.js";
import { Scheduler } from "../../../src/jobs/scheduler.js";
import type { LogEvent } from "../../../src/jobs/telemetry.js";
import { startSandbox, type Sandbox } from "../../../src/sandbox/index.js";
import { openDatabase } from "../../../src/store/file/database.js";
import { DrivenClock } from "../../helpers/driven-clock.js";

const PII = "scheduler-clock-test-pii-key-0123";
let sb: Sandbox;
let dir: string;

beforeAll(async () => {
  sb = await startSandbox({ members: 20, groups: 2, seed: 7 });
  dir = mkdtempSync(join(tmpdir(), "bsync-clock-"));
});
afterAll(async () => {
  await sb?.close();
  if (dir) rmSync(dir, { recursive: true, force: true });
});

async function scheduledFires(name: string, schedule: string, from: string, until: string): Promise<{ slots: string[]; events: LogEvent[] }> {
  const cwd = mkdtempSync(join(dir, `${name}-`));
  const dbPath = join(cwd, "snap.db");
  const config = loadConfig({ env: { BENEFITS_DB: dbPath, BENEFITS_PII_KEY: PII, BENEFITS_BASE_URL: sb.baseUrl, BENEFITS_API_KEY: sb.keys.full }, cwd });
  const job: Job = { name, description: name, schedule, timezone: "America/New_York", resources: ["designs"], enabled: true, sinks: [] };
  const clock = new DrivenClock(Date.parse(from));
  const events: LogEvent[] = [];
  const db = openDatabase(dbPath);
  const s = new Scheduler({
    jobs: [job],
    db,
    log: (e) => events.push(e),
    waitForSnapshotMs: 60_000,
    pollMs: 25,
    now: clock.now,
    sleepUntil: clock.sleepUntil,
    run: (j, signal) => runJob(j, { config, env: {}, cwd, signal, service: { baseUrl: sb.baseUrl, apiKey: sb.keys.full } }),
  });
  try {
    await s.start();
    await s.idle(); // the catch-up at start, before the clock moves
    while (await clock.step(new Date(until))) await s.idle();
    const slots = db.prepare("SELECT slot FROM _job_fires WHERE reason = 'scheduled' ORDER BY slot").pluck().all() as string[];
    return { slots, events };
  } finally {
    await s.stop("test over");
    db.close();
  }
}

describe("the scheduler's timer across daylight saving (America/New_York, 2026)", () => {
  it("a 02:30 job fires once on the spring-forward day, at 03:00 EDT, and says the fire was moved", async () => {
    const { slots, events } = await scheduledFires("spring", "30 2 * * *", "2026-03-07T12:00:00Z", "2026-03-10T00:00:00Z");
    expect(slots).toEqual(["2026-03-08T07:00:00.000Z", "2026-03-09T06:30:00.000Z"]);
    const started = events.filter((e) => e.event === "job.started" && e.reason === "scheduled");
    expect(started.map((e) => [e.slot, e.moved ?? null])).toEqual([
      ["2026-03-08T07:00:00.000Z", "2026-03-08 02:30 does not exist in America/New_York (the clocks went forward): run at 03:00:00, the first valid time after it"],
      ["2026-03-09T06:30:00.000Z", null],
    ]);
    expect(events.filter((e) => e.event === "job.succeeded" && e.reason === "scheduled")).toHaveLength(2);
  });

  it("a 01:30 job fires once on the fall-back day", async () => {
    const { slots, events } = await scheduledFires("autumn", "30 1 * * *", "2026-10-31T12:00:00Z", "2026-11-03T00:00:00Z");
    expect(slots).toEqual(["2026-11-01T05:30:00.000Z", "2026-11-02T06:30:00.000Z"]);
    expect(events.filter((e) => e.event === "job.succeeded" && e.reason === "scheduled")).toHaveLength(2);
  });
});

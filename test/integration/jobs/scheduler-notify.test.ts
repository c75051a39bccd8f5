/**
 * The scheduler tells the configured chat webhook (notify) of a fire that failed, once, and of
 * nothing that went well; a webhook nobody answers is a `notify.failed` log line, and the job's
 * outcome stays what its run made it. Real runs against the sandbox over loopback, a real
 * snapshot file, the receiver a node:http server.
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
import { closedPort } from "../../helpers/ports.js";
import { startReceiver, type Receiver } from "../../helpers/receiver.js";

const BAD_KEY = "not-a-valid-key-for-notify";
let sb: Sandbox;
let dir: string;
let receiver: Receiver;
let hook: string;
/** The text of each message the receiver got, from `from` on. */
const textsSince = (from: number) => receiver.received.slice(from).map((m) => (JSON.parse(m.body) as { text: string }).text);

beforeAll(async () => {
  sb = await startSandbox({ members: 40, groups: 2, seed: 12 });
  dir = mkdtempSync(join(tmpdir(), "bsync-sched-notify-"));
  receiver = await startReceiver();
  hook = `${receiver.url}/hooks/T1/B2/token`;
});
afterAll(async () => {
  await sb?.close();
  await receiver?.close();
  if (dir) rmSync(dir, { recursive: true, force: true });
});

const job = (name: string, resources: Job["resources"]): Job => ({ name, description: name, schedule: "0 2 * * *", timezone: "UTC", resources, enabled: true, sinks: [] });

/** A scheduler on a fresh snapshot whose `broken` job's key the service refuses (a real failed run). */
function scheduler(name: string, notifyUrl: string, events: LogEvent[]): { s: Scheduler; close: () => void } {
  const cwd = mkdtempSync(join(dir, `${name}-`));
  const dbPath = join(cwd, "snap.db");
  const config = loadConfig({ env: { BENEFITS_DB: dbPath, BENEFITS_PII_KEY: "scheduler-notify-pii-key-0123", BENEFITS_BASE_URL: sb.baseUrl, BENEFITS_API_KEY: sb.keys.full }, cwd });
  const db = openDatabase(dbPath);
  const s = new Scheduler({
    jobs: [job("broken", ["designs"]), job("fine", ["groups"])],
    db,
    log: (e) => events.push(e),
    waitForSnapshotMs: 60_000,
    pollMs: 25,
    runMissed: true,
    notifyUrl,
    run: (j, signal) => runJob(j, { config, env: {}, cwd, signal, service: { baseUrl: sb.baseUrl, apiKey: j.name === "broken" ? BAD_KEY : sb.keys.full } }),
  });
  return { s, close: () => db.close() };
}

describe("the scheduler's notify", () => {
  it("a failed fire is told once, naming the job and its error code; a fire that went well is not", async () => {
    const events: LogEvent[] = [];
    const { s, close } = scheduler("told", hook, events);
    const before = receiver.received.length;
    try {
      await s.start();
      await s.idle();
      const texts = textsSince(before);
      const failed = events.find((e) => e.event === "job.failed") as { job: string; runId: number; error: { code: string } } | undefined;
      expect(failed?.job).toBe("broken");
      expect(texts).toHaveLength(1);
      expect(texts[0]).toContain(`benefits-sync broken, run ${failed!.runId}: failed: `);
      expect(texts[0]).toContain(failed!.error.code);
      expect(texts[0]).not.toContain(BAD_KEY);
      expect(events.some((e) => e.event === "job.succeeded" && e.job === "fine")).toBe(true);
    } finally {
      await s.stop("done");
      close();
    }
  });

  it("a webhook nobody answers is a notify.failed line naming host and port; the fire's outcome is its run's", async () => {
    const events: LogEvent[] = [];
    const port = await closedPort();
    const { s, close } = scheduler("unreachable", `http://127.0.0.1:${port}/hooks/T1/B2/token`, events);
    try {
      await s.start();
      await s.idle();
      expect(events.filter((e) => e.event === "job.failed").map((e) => e.job)).toEqual(["broken"]);
      expect(events.filter((e) => e.event === "job.succeeded").map((e) => e.job)).toEqual(["fine"]);
      const warned = events.filter((e) => e.event === "notify.failed");
      expect(warned.map((e) => e.job)).toEqual(["broken"]);
      expect(String(warned[0]!.error)).toContain(`127.0.0.1:${port}`);
      expect(String(warned[0]!.error)).not.toContain("token");
    } finally {
      await s.stop("done");
      close();
    }
  });
});

/**
 * What the scheduler's JSON log says of a fire's end: `job.succeeded` names what each sink
 * received (the folders written, with their paths and rows per file), `job.failed` says why (the
 * run's error, or the delivery that failed), redacted. Real runs against the sandbox over
 * loopback, a real snapshot and real folders; fires started by hand.
 */
import { mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
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
import { runDir } from "../../helpers/run-folders.js";

const PII = "job-log-detail-test-pii-key-0123";
const BAD_KEY = "refused-key-4e1d9c";
let sb: Sandbox;
let dir: string;

beforeAll(async () => {
  sb = await startSandbox({ members: 15, groups: 2, seed: 17 });
  dir = mkdtempSync(join(tmpdir(), "bsync-job-log-"));
});
afterAll(async () => {
  await sb?.close();
  if (dir) rmSync(dir, { recursive: true, force: true });
});

const job = (name: string, sinks: string[]): Job => ({ name, description: name, schedule: "0 2 * * *", timezone: "UTC", resources: ["designs", "groups"], enabled: true, sinks });

/** One fire of `j` in a scheduler of its own, on a snapshot in `cwd` whose config names the sinks. */
async function fireOnce(cwd: string, sinks: Record<string, unknown>, j: Job, apiKey = sb.keys.full): Promise<LogEvent> {
  writeFileSync(join(cwd, "benefits-sync.config.json"), JSON.stringify({ sinks }));
  const config = loadConfig({ env: { BENEFITS_DB: join(cwd, "snap.db"), BENEFITS_PII_KEY: PII, BENEFITS_BASE_URL: sb.baseUrl, BENEFITS_API_KEY: apiKey }, cwd });
  const events: LogEvent[] = [];
  const db = openDatabase(config.db);
  const s = new Scheduler({
    jobs: [j],
    db,
    log: (e) => events.push(e),
    waitForSnapshotMs: 0,
    run: (x, signal) => runJob(x, { config, env: {}, cwd, signal, service: { baseUrl: sb.baseUrl, apiKey } }),
  });
  try {
    await s.fire(j, new Date("2036-01-01T02:00:00Z"), "scheduled");
    const end = events.find((e) => e.event === "job.succeeded" || e.event === "job.failed");
    if (!end) throw new Error(`no end line: ${JSON.stringify(events)}`);
    return end;
  } finally {
    await s.stop("test over");
    db.close();
  }
}

/** Data rows of a CSV file (its header excluded), read from disk. */
const csvRows = (file: string) => readFileSync(file, "utf8").split("\n").filter((l) => l !== "").length - 1;

describe("the scheduler's end-of-fire log line", () => {
  it("job.succeeded names each folder written, with its path and the rows of each file that has any", async () => {
    const cwd = mkdtempSync(join(dir, "ok-"));
    mkdirSync(join(cwd, "out"));
    const end = await fireOnce(cwd, { deltas: { type: "folder", dir: "out/deltas", format: "csv" } }, job("to-folder", ["deltas"]));
    const folder = join(cwd, "out", "deltas", runDir(1));
    const rows = { "designs.csv": csvRows(join(folder, "designs.csv")), "groups.csv": csvRows(join(folder, "groups.csv")), "plans.csv": csvRows(join(folder, "plans.csv")) };
    expect(Object.values(rows).every((n) => n > 0)).toBe(true);
    expect(end).toMatchObject({ event: "job.succeeded", job: "to-folder" });
    expect(end.sinks).toEqual([{ sink: "deltas", kind: "folder", output: join(cwd, "out", "deltas"), status: "delivered", runs: [1], folders: [{ dir: folder, rows }] }]);
  });

  it("job.failed says why when the run failed: the error, redacted", async () => {
    const cwd = mkdtempSync(join(dir, "refused-"));
    const end = await fireOnce(cwd, {}, job("refused", []), BAD_KEY);
    expect(end.event).toBe("job.failed");
    expect(end.why).toMatch(/^the run failed \(\w+\): .+/);
    expect(JSON.stringify(end)).not.toContain(BAD_KEY);
  });

  it("job.failed says why when the run succeeded but a delivery failed: which sink, where, and its error", async () => {
    const cwd = mkdtempSync(join(dir, "blocked-"));
    mkdirSync(join(cwd, "out"));
    writeFileSync(join(cwd, "out", "blocked"), "a file where the folder should be");
    const end = await fireOnce(cwd, { deltas: { type: "folder", dir: "out/blocked/deltas", format: "csv" } }, job("to-blocked", ["deltas"]));
    expect(end.event).toBe("job.failed");
    const prefix = `run 1 succeeded, but the delivery to sink deltas (${join(cwd, "out", "blocked", "deltas")}) failed (`;
    expect(String(end.why).slice(0, prefix.length)).toBe(prefix);
    expect(end.why).toMatch(/; the next run delivers what is pending$/);
    expect(end.sinks).toEqual([expect.objectContaining({ sink: "deltas", kind: "folder", status: "failed", error: expect.objectContaining({ code: expect.any(String) }) })]);
  });
});

/**
 * `benefits-sync schedule --metrics-port`: `GET /metrics` scraped and parsed while a job runs (a
 * sync of the sandbox over loopback) and after it: the run counted by how it ended, its duration
 * in the histogram, the textfile's gauges (last run, last success's records) agreeing with the
 * snapshot, and every label a job's name, a resource or a fixed word: never an id.
 */
import { mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { request } from "undici";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { startSandbox, type Sandbox } from "../../src/sandbox/index.js";
import { openDatabase } from "../../src/store/file/database.js";
import { StoredResources } from "../../src/store/schema/resources.js";
import { startCli } from "../helpers/cli-process.js";
import { parsePrometheusText, type Sample } from "../helpers/prometheus-parse.js";
import { waitUntil } from "../helpers/wait.js";

let sb: Sandbox;
let dir: string;
beforeAll(async () => {
  sb = await startSandbox({ members: 120, groups: 3, seed: 41 });
  dir = mkdtempSync(join(tmpdir(), "bsync-sched-metrics-"));
});
afterAll(async () => {
  await sb?.close();
  if (dir) rmSync(dir, { recursive: true, force: true });
});

const value = (samples: Sample[], name: string, labels: Record<string, string> = {}) =>
  samples.filter((s) => s.name === name && Object.entries(labels).every(([k, v]) => s.labels[k] === v)).reduce((n, s) => n + s.value, 0);

async function scrape(url: string): Promise<Sample[]> {
  const res = await request(url);
  expect(res.statusCode).toBe(200);
  expect(res.headers["content-type"]).toMatch(/^text\/plain; version=0\.0\.4/);
  return parsePrometheusText(await res.body.text());
}

describe("schedule --metrics-port: GET /metrics", () => {
  it("scraped while a job runs and after: the run counted and timed, the gauges as the snapshot says, no id in a label", async () => {
    const dbPath = join(dir, "snap.db");
    const off = { enabled: false };
    writeFileSync(
      join(dir, "benefits-sync.config.json"),
      JSON.stringify({ jobs: { "hourly-member-sync": off, "nightly-claims-export": off, "daily-groups-designs": off, "monthly-reconcile": off } }),
    );
    const env = { BENEFITS_DB: dbPath, BENEFITS_PII_KEY: "scheduler-metrics-pii-key-0123456789", BENEFITS_BASE_URL: sb.baseUrl, BENEFITS_API_KEY: sb.keys.full };
    sb.setFaults({ latencyMs: { min: 20, max: 40 } });
    const daemon = startCli(["schedule", "--run-missed", "--metrics-port", "0"], env, dir);
    let out = "";
    daemon.child.stdout!.on("data", (d: Buffer) => (out += d.toString()));
    try {
      const url = await waitUntil("the metrics line", () => {
        const line = out.split("\n").find((l) => l.includes('"scheduler.metrics"'));
        return line ? (JSON.parse(line) as { url: string }).url : daemon.child.exitCode !== null ? Promise.reject(new Error(`exited ${daemon.child.exitCode}`)) : undefined;
      });
      expect(url).toMatch(/^http:\/\/127\.0\.0\.1:\d+\/metrics$/);
      await waitUntil("the job.started line", () => out.includes('"event":"job.started"'));
      // While the job runs: it parses, and no run has ended yet.
      const during = await scrape(url);
      if (!out.includes('"event":"job.succeeded"')) expect(value(during, "benefits_sync_job_runs_total")).toBe(0);
      await waitUntil("the job.succeeded line", () => out.includes('"event":"job.succeeded"'), 60_000);
      const after = await scrape(url);
      const job = { job: "weekly-full-walk" };
      expect(value(after, "benefits_sync_job_runs_total", { ...job, outcome: "succeeded" })).toBe(1);
      expect(value(after, "benefits_sync_job_runs_total")).toBe(1);
      expect(value(after, "benefits_sync_job_run_duration_seconds_count", job)).toBe(1);
      expect(value(after, "benefits_sync_job_run_duration_seconds_sum", job)).toBeGreaterThan(0);
      expect(value(after, "benefits_sync_job_run_duration_seconds_bucket", { ...job, le: "+Inf" })).toBe(1);
      expect(value(after, "benefits_sync_job_last_run_succeeded", job)).toBe(1);
      // The last success's records, as the snapshot's run counts say.
      const counts = (() => {
        const db = openDatabase(dbPath, { readonly: true });
        try {
          return db.prepare("SELECT resource, inserted FROM _run_counts WHERE run_id = (SELECT MAX(run_id) FROM _runs)").all() as { resource: string; inserted: number }[];
        } finally {
          db.close();
        }
      })();
      expect(counts.find((c) => c.resource === "members")!.inserted).toBeGreaterThan(100);
      for (const c of counts) expect(value(after, "benefits_sync_job_last_success_records", { ...job, resource: c.resource, what: "inserted" }), c.resource).toBe(c.inserted);
      // Labels: job names, resources, fixed words, numbers; never an id.
      const allowed = /^(weekly-full-walk|seen|inserted|updated|deleted|succeeded|failed|interrupted|busy|name|typed|text|\+Inf|\d*\.?\d+(e[-+]?\d+)?)$/;
      for (const s of after) for (const v of Object.values(s.labels)) expect((StoredResources as readonly string[]).includes(v) || allowed.test(v), `${s.name} ${v}`).toBe(true);
    } finally {
      sb.setFaults({});
      daemon.child.kill("SIGTERM");
    }
    expect((await daemon.done).code).toBe(143);
  });
});

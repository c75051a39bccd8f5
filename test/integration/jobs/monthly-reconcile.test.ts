/**
 * The monthly reconciliation as a scheduled job (jobs/monthly-reconcile.ts): fired by the scheduler
 * like the others, it writes last month's report (its first day against this month's, as of this
 * month's) into `reconcile-YYYY-MM/` in the job's folder sink, records its outcome in the run
 * history, rewrites the metrics textfile and pings its heartbeat. Real syncs against the sandbox
 * over loopback, a real snapshot; the two syncs are dated in the history so that each month's
 * first day falls after one of them.
 */
import { mkdirSync, mkdtempSync, readdirSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { createServer, type Server } from "node:http";
import type { AddressInfo } from "node:net";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { loadConfig } from "../../../src/config/load.js";
import type { Config } from "../../../src/config/schema.js";
import type { Job } from "../../../src/jobs/job.js";
import { effectiveJobs, findJob } from "../../../src/jobs/registry.js";
import { runJob } from "../../../src/jobs/run-job.js";
import { Scheduler } from "../../../src/jobs/scheduler.js";
import type { LogEvent } from "../../../src/jobs/telemetry.js";
import { startSandbox, type Sandbox } from "../../../src/sandbox/index.js";
import { openDatabase } from "../../../src/store/file/database.js";
import { startCli } from "../../helpers/cli-process.js";

const PII = "monthly-reconcile-test-pii-key-01";
let sb: Sandbox;
let dir: string;
let hooks: Server;
let hookUrl: string;
const pings: string[] = [];

beforeAll(async () => {
  sb = await startSandbox({ members: 30, groups: 2, seed: 23 });
  dir = mkdtempSync(join(tmpdir(), "bsync-monthly-"));
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

/** A snapshot with two syncs, dated `dates` in the history (default 2036-11-20 and 2036-12-20); the monthly job as configured. */
async function setup(dates = ["2036-11-20", "2036-12-20"]): Promise<{ cwd: string; config: Config; monthly: Job; textfile: string }> {
  const cwd = mkdtempSync(join(dir, "snap-"));
  mkdirSync(join(cwd, "out"));
  const textfile = join(cwd, "benefits_sync.prom");
  writeFileSync(
    join(cwd, "benefits-sync.config.json"),
    JSON.stringify({ sinks: { reports: { type: "folder", dir: "out", format: "csv" } }, jobs: { "monthly-reconcile": { heartbeatUrl: `${hookUrl}/monthly` } }, schedule: { textfile } }),
  );
  const config = loadConfig({ env: { BENEFITS_DB: join(cwd, "snap.db"), BENEFITS_PII_KEY: PII, BENEFITS_BASE_URL: sb.baseUrl, BENEFITS_API_KEY: sb.keys.full }, cwd });
  const walk: Job = { name: "walk", description: "walk", schedule: "0 3 * * 0", timezone: "UTC", resources: ["designs", "groups", "members"], enabled: true, sinks: [] };
  for (let i = 0; i < 2; i++) {
    const r = await runJob(walk, { config, env: {}, cwd, service: { baseUrl: sb.baseUrl, apiKey: sb.keys.full } });
    expect(r.status).toBe("succeeded");
  }
  const db = openDatabase(config.db);
  try {
    const date = db.prepare("UPDATE _runs SET started_at = ?, finished_at = ? WHERE run_id = ?");
    dates.forEach((d, i) => date.run(`${d}T03:00:00.000Z`, `${d}T03:01:00.000Z`, i + 1));
  } finally {
    db.close();
  }
  return { cwd, config, monthly: findJob(effectiveJobs(config), "monthly-reconcile"), textfile };
}

/** Fire `job` once in a scheduler whose runs start at `now`; the fire's end line. */
async function fireAt(t: { cwd: string; config: Config; textfile: string }, job: Job, now: string, notifyUrl?: string): Promise<LogEvent> {
  const events: LogEvent[] = [];
  const db = openDatabase(t.config.db);
  const s = new Scheduler({
    jobs: [job],
    db,
    log: (e) => events.push(e),
    textfile: t.textfile,
    waitForSnapshotMs: 0,
    ...(notifyUrl ? { notifyUrl } : {}),
    now: () => new Date(now),
    run: (j, signal) => runJob(j, { config: t.config, env: {}, cwd: t.cwd, signal, now: new Date(now) }),
  });
  try {
    await s.fire(job, new Date(now), "scheduled");
    return events.find((e) => e.event === "job.succeeded" || e.event === "job.failed")!;
  } finally {
    await s.stop("test over");
    db.close();
  }
}

describe("the monthly-reconcile job", () => {
  it("is a job like the others: on the 1st at 06:00 UTC, enabled, delivering to the configured sinks", async () => {
    const config = loadConfig({ env: { BENEFITS_DB: join(dir, "none.db"), BENEFITS_PII_KEY: PII }, cwd: dir });
    expect(findJob(effectiveJobs(config), "monthly-reconcile")).toMatchObject({ schedule: "0 6 1 * *", timezone: "UTC", enabled: true, kind: "reconcile" });
  });

  it("writes last month's report into reconcile-YYYY-MM/ in its folder sink, and records, meters and pings its outcome", async () => {
    const t = await setup();
    pings.length = 0;
    const end = await fireAt(t, t.monthly, "2037-01-01T06:00:00Z");
    const out = join(t.cwd, "out", "reconcile-2036-12");
    expect(end).toMatchObject({ event: "job.succeeded", job: "monthly-reconcile", reconcile: { from: "2036-12-01", to: "2037-01-01", asOf: "2037-01-01", dirs: [out], arithmeticHolds: true } });
    const report = JSON.parse(readFileSync(join(out, "report.json"), "utf8")) as { from: { runId: number }; to: { runId: number }; asOfDate: string };
    expect([report.from.runId, report.to.runId, report.asOfDate]).toEqual([1, 2, "2037-01-01"]);
    const db = openDatabase(t.config.db);
    try {
      expect(db.prepare("SELECT job, status, dirs, error FROM _report_runs").all()).toEqual([{ job: "monthly-reconcile", status: "succeeded", dirs: JSON.stringify([out]), error: null }]);
      // A report is not a sync: the syncs' history is untouched.
      expect(db.prepare("SELECT COUNT(*) FROM _runs").pluck().get()).toBe(2);
    } finally {
      db.close();
    }
    expect(readFileSync(t.textfile, "utf8")).toContain('benefits_sync_job_last_run_succeeded{job="monthly-reconcile"} 1');
    expect(pings).toEqual(["/ping/monthly/start", "/ping/monthly"]);
  });

  it("a month with no sync on or before its first day (a new install) is nothing to reconcile yet: no report, no failure, no alert", async () => {
    const t = await setup();
    pings.length = 0;
    // A notification receiver: a failure would be posted to it.
    const notified: string[] = [];
    const notify = createServer((req, res) => {
      let body = "";
      req.on("data", (c: Buffer) => (body += c.toString()));
      req.on("end", () => (notified.push(body), res.end("ok")));
    });
    await new Promise<void>((r) => notify.listen(0, "127.0.0.1", r));
    const notifyUrl = `http://127.0.0.1:${(notify.address() as AddressInfo).port}/notify`;
    try {
      const end = await fireAt(t, t.monthly, "2036-12-01T06:00:00Z", notifyUrl);
      expect(end).toMatchObject({ event: "job.succeeded", reconcile: { from: "2036-11-01", dirs: [] } });
      expect((end.reconcile as { nothingYet: string }).nothingYet).toBe(
        "no sync had succeeded by 2036-11-01 (the first succeeded at 2036-11-20T03:00:00.000Z), so last month has no starting point; the first report comes on 2037-01-01",
      );
      expect(end.why).toBeUndefined();
      expect(notified).toEqual([]);
    } finally {
      await new Promise((r) => notify.close(r));
    }
    const db = openDatabase(t.config.db);
    try {
      expect(db.prepare("SELECT status, dirs FROM _report_runs").all()).toEqual([{ status: "succeeded", dirs: "[]" }]);
    } finally {
      db.close();
    }
    expect(readdirSync(join(t.cwd, "out"))).toEqual([]);
    expect(readFileSync(t.textfile, "utf8")).toContain('benefits_sync_job_last_run_succeeded{job="monthly-reconcile"} 1');
    expect(pings).toEqual(["/ping/monthly/start", "/ping/monthly"]);
  });
});

describe("benefits-sync run monthly-reconcile", () => {
  it("writes last month's report now and prints where", async () => {
    // Last month's first day and this month's, from today's date (UTC).
    const now = new Date();
    const day = (y: number, m: number, d: number) => new Date(Date.UTC(y, m, d)).toISOString().slice(0, 10);
    const [y, m] = [now.getUTCFullYear(), now.getUTCMonth()];
    const [from, to, month] = [day(y, m - 1, 1), day(y, m, 1), day(y, m - 1, 1).slice(0, 7)];
    const t = await setup([day(y, m - 1, 0), day(y, m, 0)]);
    const env = { BENEFITS_DB: t.config.db, BENEFITS_PII_KEY: PII };
    const ok = await startCli(["run", "monthly-reconcile"], env, t.cwd).done;
    expect(ok.code, ok.stderr).toBe(0);
    const out = join(t.cwd, "out", `reconcile-${month}`);
    expect(ok.stdout).toBe(`Reconciliation of ${from} with ${to} (as of ${to}): ${out}/report.html (and summary.md, report.json, CSV files)\n`);
    expect(JSON.parse(readFileSync(join(out, "report.json"), "utf8"))).toMatchObject({ from: { runId: 1 }, to: { runId: 2 }, asOfDate: to });
  });

  it("on a new install says there is nothing to reconcile yet and exits 0, alerting no one", async () => {
    const now = new Date();
    const from = new Date(Date.UTC(now.getUTCFullYear(), now.getUTCMonth() - 1, 1)).toISOString().slice(0, 10);
    const late = await setup(["2036-11-20", "2036-12-20"]);
    const notified: string[] = [];
    const notify = createServer((req, res) => {
      notified.push(req.url ?? "");
      res.end("ok");
    });
    await new Promise<void>((r) => notify.listen(0, "127.0.0.1", r));
    try {
      // The job's config with a chat webhook, which a failure would be posted to.
      const file = join(late.cwd, "benefits-sync.config.json");
      writeFileSync(file, JSON.stringify({ ...JSON.parse(readFileSync(file, "utf8")), notify: { urlEnv: "TEST_NOTIFY_URL" } }));
      const env = { BENEFITS_DB: late.config.db, BENEFITS_PII_KEY: PII, TEST_NOTIFY_URL: `http://127.0.0.1:${(notify.address() as AddressInfo).port}/notify` };
      const first = await startCli(["run", "monthly-reconcile"], env, late.cwd).done;
      expect(first.code, first.stderr).toBe(0);
      expect(first.stdout).toBe(`monthly-reconcile: nothing to reconcile yet: no sync had succeeded by ${from} (the first succeeded at 2036-11-20T03:00:00.000Z), so last month has no starting point; the first report comes on 2037-01-01\n`);
      expect(first.stderr).toBe("");
      expect(notified).toEqual([]);
    } finally {
      await new Promise((r) => notify.close(r));
    }
    // With no successful sync at all, the same, and the file is still no report's.
    const empty = await setup([]);
    const db = openDatabase(empty.config.db);
    db.prepare("UPDATE _runs SET status = 'failed'").run();
    db.close();
    const none = await startCli(["run", "monthly-reconcile", "--json"], { BENEFITS_DB: empty.config.db, BENEFITS_PII_KEY: PII }, empty.cwd).done;
    expect(none.code, none.stderr).toBe(0);
    expect(JSON.parse(none.stdout)).toMatchObject({ status: "succeeded", dirs: [], nothingYet: expect.stringMatching(/^no sync has succeeded yet/) });
  });
});

/**
 * The CLI's long-running commands as cron and systemd run them, each as its own process (the
 * built CLI) against the sandbox over loopback and a real snapshot file (the scheduler's own
 * rules, in-process: test/integration/jobs/scheduler.test.ts):
 *
 * - SIGTERM in the middle of `run JOB` stops fetching and exits 143 with the run recorded
 *   interrupted, and the next run completes with every change recorded exactly once; the same for
 *   `schedule`, and SIGINT for `sync` (130). Signals are sent at an observed point (the run's
 *   first commit), and "stopped" is counted in requests the sandbox saw after the signal, not in
 *   seconds;
 * - `schedule`'s first start on a new snapshot;
 * - --quiet, and the claims window's notices.
 */
import type { Database } from "better-sqlite3";
import { mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { startSandbox, type Sandbox } from "../../src/sandbox/index.js";
import { openDatabase } from "../../src/store/file/database.js";
import { startCli } from "../helpers/cli-process.js";
import { expectedState, snapshotState, stateToObject } from "../helpers/expected.js";
import { sandboxData } from "../helpers/sandbox-truth.js";
import { waitUntil } from "../helpers/wait.js";

const PII = "scheduler-test-pii-key-0123456789";
let sb: Sandbox;
let dir: string;

beforeAll(async () => {
  sb = await startSandbox({ members: 120, groups: 3, seed: 31 });
  dir = mkdtempSync(join(tmpdir(), "bsync-sched-cli-"));
});
afterAll(async () => {
  await sb?.close();
  if (dir) rmSync(dir, { recursive: true, force: true });
});

function setup(name: string): { dbPath: string; cwd: string } {
  const cwd = mkdtempSync(join(dir, `${name}-`));
  return { dbPath: join(cwd, "snap.db"), cwd };
}

/** Read the snapshot file on a connection of its own, closed after. */
function peek<T>(path: string, read: (db: Database) => T): T {
  const db = openDatabase(path);
  try {
    return read(db);
  } finally {
    db.close();
  }
}

/** A count read while a CLI process writes the file; 0 while it cannot be read yet. */
function countNow(path: string, sql: string): number {
  try {
    return peek(path, (db) => db.prepare(sql).pluck().get() as number);
  } catch {
    return 0;
  }
}

const cliEnv = (t: { dbPath: string }) => ({ BENEFITS_DB: t.dbPath, BENEFITS_PII_KEY: PII, BENEFITS_BASE_URL: sb.baseUrl, BENEFITS_API_KEY: sb.keys.full });
const committed = (t: { dbPath: string }) => countNow(t.dbPath, "SELECT COUNT(*) FROM _run_counts") > 0;

/**
 * Requests that may still reach the sandbox after a signal: those already sent (the client's
 * default concurrency, 4). A run that kept walking would send many more (the walks left take
 * dozens of requests).
 */
const IN_FLIGHT = 4;

describe("benefits-sync run JOB, stopped", () => {
  it("SIGTERM mid-run stops fetching, exits 143, records the run interrupted, and the next run completes with every change recorded once", async () => {
    const t = setup("term");
    const env = cliEnv(t);
    sb.setFaults({ latencyMs: { min: 250, max: 350 } });
    try {
      const cli = startCli(["run", "weekly-full-walk", "--json", "--quiet"], env, t.cwd);
      // Wait for the run to commit its first pages, then stop it.
      await waitUntil("the run's first commit", () => committed(t));
      const atSignal = sb.stats().requests;
      cli.child.kill("SIGTERM");
      const r = await cli.done;
      expect(r.code, r.stderr).toBe(143);
      expect(sb.stats().requests - atSignal).toBeLessThanOrEqual(IN_FLIGHT);
      expect(peek(t.dbPath, (db) => db.prepare("SELECT job, status, error FROM _runs").all())).toEqual([
        { job: "weekly-full-walk", status: "failed", error: "INTERRUPTED: stopped by SIGTERM" },
      ]);
    } finally {
      sb.setFaults({});
    }
    const again = await startCli(["run", "weekly-full-walk", "--json", "--quiet"], env, t.cwd).done;
    expect(again.code, again.stderr).toBe(0);
    expect(JSON.parse(again.stdout.trim().split("\n").pop()!)).toMatchObject({ status: "succeeded", resumedFrom: 1 });
    peek(t.dbPath, (db) => {
      // Every record inserted exactly once across the two runs, and the snapshot equals the service.
      expect(db.prepare("SELECT resource, id, COUNT(*) AS n FROM changes GROUP BY resource, id HAVING n > 1").all()).toEqual([]);
      const want = stateToObject(expectedState(sandboxData(sb), Buffer.from(PII)));
      const got = stateToObject(snapshotState(db));
      for (const r of ["designs", "groups", "plans", "members", "coverages"]) expect(got[r], r).toEqual(want[r]);
    });
  });
});

describe("benefits-sync sync, stopped by SIGINT", () => {
  it("exits 130 with the run recorded interrupted by SIGINT", async () => {
    const t = setup("int");
    const env = cliEnv(t);
    sb.setFaults({ latencyMs: { min: 250, max: 350 } });
    try {
      const cli = startCli(["sync", "--claims-since", "1900-01-01", "--claims-until", "2999-12-31", "--quiet"], env, t.cwd);
      const running = () => countNow(t.dbPath, "SELECT COUNT(*) FROM _runs WHERE status = 'running'") > 0;
      // Signalled once the run has committed its first pages, with many more to walk (latency).
      await waitUntil("the run's first commit", () => committed(t));
      expect(running()).toBe(true);
      cli.child.kill("SIGINT");
      const r = await cli.done;
      expect(r.code, r.stderr).toBe(130);
      expect(r.stderr).toMatch(/interrupted \(stopped by SIGINT\).*the next run resumes it/);
      expect(peek(t.dbPath, (db) => db.prepare("SELECT status, error FROM _runs").all())).toEqual([{ status: "failed", error: "INTERRUPTED: stopped by SIGINT" }]);
    } finally {
      sb.setFaults({});
    }
  });
});

describe("benefits-sync schedule, stopped", () => {
  it("SIGTERM while a job behind its schedule runs at start (--run-missed): it stops fetching, exits 143, the run recorded interrupted, JSON lines said so", async () => {
    const t = setup("daemon");
    writeFileSync(join(t.cwd, "benefits-sync.config.json"), JSON.stringify({ jobs: { "hourly-member-sync": { enabled: false }, "nightly-claims-export": { enabled: false }, "daily-groups-designs": { enabled: false }, "monthly-reconcile": { enabled: false } } }));
    const env = cliEnv(t);
    sb.setFaults({ latencyMs: { min: 250, max: 350 } });
    try {
      const daemon = startCli(["schedule", "--run-missed"], env, t.cwd);
      let out = "";
      daemon.child.stdout!.on("data", (d: Buffer) => (out += d.toString()));
      await waitUntil("the job.started line", () => out.includes('"event":"job.started"'));
      // Stop it once its run has committed its first pages (and has many more to walk).
      await waitUntil("the run's first commit", () => committed(t));
      const atSignal = sb.stats().requests;
      daemon.child.kill("SIGTERM");
      const r = await daemon.done;
      expect(r.code, r.stderr).toBe(143);
      expect(sb.stats().requests - atSignal).toBeLessThanOrEqual(IN_FLIGHT);
      const events = r.stdout.trim().split("\n").map((l) => JSON.parse(l) as { event: string; job?: string; reason?: string });
      expect(events.map((e) => e.event)).toEqual(["scheduler.started", "job.missed", "job.started", "job.interrupted", "scheduler.stopped"]);
      expect(events[2]).toMatchObject({ job: "weekly-full-walk", reason: "missed" });
      peek(t.dbPath, (db) => {
        expect(db.prepare("SELECT job, status, error FROM _runs").all()).toEqual([{ job: "weekly-full-walk", status: "failed", error: "INTERRUPTED: stopped by SIGTERM" }]);
        expect(db.prepare("SELECT job, reason, outcome FROM _job_fires").all()).toEqual([{ job: "weekly-full-walk", reason: "missed", outcome: "interrupted" }]);
      });
    } finally {
      sb.setFaults({});
    }
  });
});

describe("benefits-sync schedule, first start", () => {
  it("runs nothing on a new snapshot and prints each enabled job's next fire; --help says what --run-missed does", async () => {
    const t = setup("first-start");
    const env = cliEnv(t);
    const daemon = startCli(["schedule"], env, t.cwd);
    let out = "";
    daemon.child.stdout!.on("data", (d: Buffer) => (out += d.toString()));
    await waitUntil("a line per job", () => (out.match(/"event":"job\.next"/g) ?? []).length >= 5);
    daemon.child.kill("SIGTERM");
    const r = await daemon.done;
    expect(r.code, r.stderr).toBe(143);
    const events = r.stdout.trim().split("\n").map((l) => JSON.parse(l) as { event: string; message?: string });
    expect(events.map((e) => e.event)).toEqual(["scheduler.started", "job.next", "job.next", "job.next", "job.next", "job.next", "scheduler.stopped"]);
    expect(events[0]!.message).toBe("first start of a scheduler on this snapshot: nothing was missed, so nothing runs now (`schedule --run-missed` runs each job that is behind its schedule)");
    const stamp = "\\d{4}-\\d\\d-\\d\\d \\d\\d:\\d\\d UTC";
    expect(events.slice(1, 6).map((e) => e.message)).toEqual(
      ["nightly-claims-export", "hourly-member-sync", "daily-groups-designs", "weekly-full-walk", "monthly-reconcile"].map((j) => expect.stringMatching(new RegExp(`^${j}: never ran; next ${stamp}$`))),
    );
    expect(peek(t.dbPath, (db) => db.prepare("SELECT COUNT(*) FROM _runs").pluck().get())).toBe(0);
    const help = await startCli(["schedule", "--help"], env, t.cwd).done;
    expect(help.stdout.replace(/\s+/g, " ")).toContain("--run-missed at start, run each job whose last success is older than its latest due time");
  });
});

describe("cron manners", () => {
  it("--quiet prints nothing on success; a claims window that selects nothing, and stored claims outside it, are said once", async () => {
    const t = setup("quiet");
    const env = cliEnv(t);
    const quiet = await startCli(["--quiet", "run", "daily-groups-designs"], env, t.cwd).done;
    expect([quiet.code, quiet.stdout, quiet.stderr]).toEqual([0, "", ""]);
    // Claims over the whole calendar, then a window that holds none of the sandbox's claims. (The
    // nightly job's own window no longer does: against a sandbox on loopback, a default window ends
    // on the sandbox's today, as the README's stand-in recipe needs, so it selects its recent claims.)
    const all = await startCli(["--quiet", "sync", "--resources", "groups,claims", "--claims-since", "1900-01-01", "--claims-until", "2999-12-31"], env, t.cwd).done;
    expect(all.code, all.stderr).toBe(0);
    const stored = peek(t.dbPath, (db) => db.prepare("SELECT COUNT(*) FROM claims").pluck().get() as number);
    expect(stored).toBeGreaterThan(0);
    const nightly = await startCli(["sync", "--resources", "groups,claims", "--claims-since", "1990-01-01", "--claims-until", "1990-03-31"], env, t.cwd).done;
    expect(nightly.code, nightly.stderr).toBe(0);
    expect(nightly.stderr.match(/selected no claim/g), nightly.stderr).toHaveLength(1);
    expect(nightly.stderr.match(new RegExp(`${stored} stored claims have service dates outside the window`, "g"))).toHaveLength(1);
  });

  it("a resumed run that did not walk the claims again does not say the window selected no claim", async () => {
    const t = setup("resumed");
    const env = cliEnv(t);
    // No retries: the members walk fails at once, the claims walk (a scope of its own) completes.
    writeFileSync(join(t.cwd, "benefits-sync.config.json"), JSON.stringify({ http: { retry: { maxAttempts: 1 } } }));
    const args = ["sync", "--resources", "groups,members,claims", "--claims-since", "1900-01-01", "--claims-until", "2999-12-31"];
    sb.setFaults({ pathPrefix: "/v2/members", http500: 1 });
    let failed;
    try {
      failed = await startCli(args, env, t.cwd).done;
    } finally {
      sb.setFaults({});
    }
    expect(failed.code, failed.stderr).not.toBe(0);
    const walked = peek(t.dbPath, (db) => db.prepare("SELECT seen FROM _run_counts WHERE run_id = 1 AND resource = 'claims'").pluck().get() as number);
    expect(walked).toBeGreaterThan(0);
    const resumed = await startCli([...args, "--json"], env, t.cwd).done;
    expect(resumed.code, resumed.stderr).toBe(0);
    expect(JSON.parse(resumed.stdout.trim().split("\n").pop()!)).toMatchObject({ status: "succeeded", resumedFrom: 1 });
    expect(resumed.stderr).not.toMatch(/selected no claim/);
  });
});

/**
 * A second sync while the snapshot is taken, as cron starts one on top of a slow night: it exits
 * 75 at once (before the first run ends, never after a busy wait ending in a raw SQLITE_BUSY) and
 * names what holds the snapshot: the run's id, host, pid and start, or another program's lock.
 * Through the built CLI, on real files, against the sandbox over loopback.
 */
import BetterSqlite3 from "better-sqlite3";
import { existsSync, mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { hostname, tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { startSandbox, type Sandbox } from "../../src/sandbox/index.js";
import { startCli } from "../helpers/cli-process.js";
import { waitUntil } from "../helpers/wait.js";

const PII = "second-sync-pii-key-0123456789";
let sb: Sandbox;
let dir: string;

beforeAll(async () => {
  sb = await startSandbox({ members: 200, groups: 2, seed: 6 });
  dir = mkdtempSync(join(tmpdir(), "bsync-second-"));
});
afterAll(async () => {
  await sb?.close();
  if (dir) rmSync(dir, { recursive: true, force: true });
});

const envFor = (db: string) => ({ BENEFITS_BASE_URL: sb.baseUrl, BENEFITS_API_KEY: sb.keys.full, BENEFITS_DB: db, BENEFITS_PII_KEY: PII });

/** The run the file says is running, once it has one. */
function runningRow(db: string): { run_id: number; started_at: string } | undefined {
  if (!existsSync(db)) return undefined;
  try {
    const conn = new BetterSqlite3(db, { readonly: true, fileMustExist: true });
    try {
      return conn.prepare("SELECT run_id, started_at FROM _runs WHERE status = 'running'").get() as { run_id: number; started_at: string } | undefined;
    } finally {
      conn.close();
    }
  } catch {
    return undefined; // not created or migrated yet
  }
}

describe("a second sync while the snapshot is taken", () => {
  it("during a slow sync: exits 75 before the first finishes, naming its run id, host, pid and start", async () => {
    const db = join(dir, "slow.db");
    // The first sync is held at its first request until the second has answered: the service
    // does not answer (hang), the first's client gives up after a second and tries again, for as
    // long as it takes. (A slow sandbox alone was a race: on a loaded machine the second CLI took
    // longer to start than the first took to finish.)
    const cwd = mkdtempSync(join(dir, "slow-"));
    writeFileSync(join(cwd, "benefits-sync.config.json"), JSON.stringify({ http: { headersTimeoutMs: 1000, retry: { maxAttempts: 100_000, baseMs: 50, capMs: 200 } } }));
    sb.setFaults({ hang: 1 });
    try {
      const first = startCli(["sync"], envFor(db), cwd);
      let firstDone = false;
      const firstResult = first.done.then((r) => ((firstDone = true), r));
      const row = await waitUntil("the first sync's run row", () => runningRow(db));
      const second = await startCli(["sync", "--quiet"], envFor(db), cwd).done;
      expect(firstDone, "the second sync waited for the first to finish").toBe(false);
      expect(second.code, second.stderr).toBe(75);
      expect(second.stderr).toContain(`run ${row.run_id} `);
      expect(second.stderr).toContain(`pid ${first.child.pid}`);
      expect(second.stderr).toContain(hostname());
      expect(second.stderr).toContain(`started ${row.started_at}`);
      expect(second.stderr).not.toContain("SQLITE_BUSY");
      sb.setFaults({});
      const done = await firstResult;
      expect(done.code, done.stderr).toBe(0);
    } finally {
      sb.setFaults({});
    }
  });

  it("while a run holds the write lock over a long wait: exits 75 naming the run, without waiting for the lock", async () => {
    const db = join(dir, "locked-run.db");
    expect((await startCli(["sync", "--quiet"], envFor(db), dir).done).code).toBe(0);
    const conn = new BetterSqlite3(db);
    try {
      // A run of this host whose process (this one) is alive and whose lease runs for an hour.
      const started = new Date().toISOString();
      const runId = Number(
        conn
          .prepare("INSERT INTO _runs (job, status, started_at, options, pid, host, fresh, owner, lease_until) VALUES ('sync', 'running', ?, '{}', ?, ?, '[]', 'x', ?)")
          .run(started, process.pid, hostname(), new Date(Date.now() + 3_600_000).toISOString()).lastInsertRowid,
      );
      conn.exec("BEGIN IMMEDIATE"); // its group of pages, open while it waits on the network
      const second = await startCli(["sync"], envFor(db), dir).done;
      expect(second.code, second.stderr).toBe(75);
      expect(second.stderr).toContain(`run ${runId} (pid ${process.pid} on ${hostname()}, started ${started})`);
      expect(second.stderr).not.toContain("SQLITE_BUSY");
      conn.exec("ROLLBACK");
    } finally {
      conn.close();
    }
  });

  it("while another program holds a write lock: exits 75 saying so, not a raw SQLITE_BUSY", async () => {
    const db = join(dir, "analyst.db");
    expect((await startCli(["sync", "--quiet"], envFor(db), dir).done).code).toBe(0);
    const analyst = new BetterSqlite3(db);
    try {
      analyst.exec("BEGIN IMMEDIATE");
      const second = await startCli(["sync"], envFor(db), dir).done;
      expect(second.code, second.stderr).toBe(75);
      expect(second.stderr).toContain("the snapshot is locked by another process (not a benefits-sync run)");
      expect(second.stderr).toContain(db);
      expect(second.stderr).not.toContain("SQLITE_BUSY");
      analyst.exec("ROLLBACK");
    } finally {
      analyst.close();
    }
  });
});

/**
 * A step that reads before it writes must take the write lock first (BEGIN IMMEDIATE). In WAL
 * mode SQLite never calls the busy handler for a connection that already reads and then wants to
 * write while another holds the write lock: it answers SQLITE_BUSY at once, however long the busy
 * timeout. Found when two schedulers started on a new snapshot: one run's SSN-rule check failed
 * in 15 ms (SQLITE_BUSY) while the other scheduler's claim held the lock for a moment.
 *
 * Here another thread holds the write lock, lets go on its own (well inside the 10 s busy
 * timeout), and each step must wait for it and succeed. Before the fix both failed at once.
 */
import BetterSqlite3 from "better-sqlite3";
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { createRequire } from "node:module";
import { Worker } from "node:worker_threads";
import { afterEach, describe, expect, it } from "vitest";
import { ssnMasker } from "../../../src/store/pii.js";
import { openDatabase } from "../../../src/store/database.js";
import { migrate, migrations } from "../../../src/store/migrations.js";
import { scrubStoredSsns } from "../../../src/store/ssn-scrub.js";

const dirs: string[] = [];
afterEach(() => {
  for (const d of dirs.splice(0)) rmSync(d, { recursive: true, force: true });
});

function snapshot(): string {
  const dir = mkdtempSync(join(tmpdir(), "bsync-lockwait-"));
  dirs.push(dir);
  const path = join(dir, "snap.db");
  openDatabase(path).close();
  return path;
}

/**
 * Another thread takes the write lock and says so; it lets go after `holdMs` by its own clock
 * (this thread is inside SQLite's busy wait meanwhile and cannot tell it to). Resolves when it
 * holds the lock; `released` when it has let go.
 */
async function holdWriteLock(path: string, holdMs: number): Promise<{ released: Promise<void> }> {
  const w = new Worker(
    `const { parentPort, workerData } = require("node:worker_threads");
     const Database = require(workerData.module);
     const db = new Database(workerData.path);
     db.exec("BEGIN IMMEDIATE");
     db.prepare("INSERT INTO _meta (key, value) VALUES ('lock-holder', 'x') ON CONFLICT (key) DO NOTHING").run();
     parentPort.postMessage("held");
     Atomics.wait(new Int32Array(new SharedArrayBuffer(4)), 0, 0, workerData.holdMs);
     db.exec("COMMIT");
     db.close();
     parentPort.postMessage("released");`,
    { eval: true, workerData: { path, holdMs, module: createRequire(import.meta.url).resolve("better-sqlite3") } },
  );
  const released = new Promise<void>((resolve, reject) => {
    w.on("error", reject);
    w.on("message", (m) => m === "released" && resolve());
  });
  await new Promise<void>((resolve, reject) => {
    w.on("error", reject);
    w.on("message", (m) => m === "held" && resolve());
  });
  return { released };
}

describe("steps that read, then write, wait for the write lock", () => {
  it("the SSN rule's scrub of a new snapshot waits for another connection's write", async () => {
    const path = snapshot();
    const db = openDatabase(path);
    try {
      const { released } = await holdWriteLock(path, 300);
      expect(scrubStoredSsns(db, ssnMasker(Buffer.alloc(32, 7)))).toBe(0);
      await released;
      expect(db.prepare("SELECT value FROM _meta WHERE key = 'ssn_rule'").pluck().get()).not.toBeUndefined();
    } finally {
      db.close();
    }
  });

  it("a migration that reads first waits for another connection's write, and runs once", async () => {
    const path = snapshot();
    // One version behind: the last migration reads the table's columns before it writes.
    const raw = new BetterSqlite3(path);
    raw.pragma(`user_version = ${migrations.length - 1}`);
    raw.close();
    const db = new BetterSqlite3(path);
    db.pragma("busy_timeout = 10000");
    try {
      const { released } = await holdWriteLock(path, 300);
      migrate(db);
      await released;
      expect(db.pragma("user_version", { simple: true })).toBe(migrations.length);
    } finally {
      db.close();
    }
  });
});

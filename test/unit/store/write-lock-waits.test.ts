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
import { afterEach, describe, expect, it } from "vitest";
import { ssnMasker } from "../../../src/store/pii/pii.js";
import { openDatabase } from "../../../src/store/file/database.js";
import { migrate, migrations } from "../../../src/store/schema/migrations.js";
import { PII_KEY_CHECK_META, resolveSnapshotPiiKey } from "../../../src/store/pii/pii-key-identity.js";
import { scrubStoredSsns } from "../../../src/store/pii/ssn-scrub.js";
import { holdWriteLock } from "../../helpers/lock-holder.js";

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

describe("steps that read, then write, wait for the write lock", () => {
  it("the SSN rule's scrub of a new snapshot waits for another connection's write", async () => {
    const path = snapshot();
    const db = openDatabase(path);
    try {
      const { released } = await holdWriteLock(path, 300);
      // Waits for the holder (a commit would be lost if it were rolled back under it; it rolls back).
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

describe("a step that records only when it can does not wait for the lock", () => {
  it("the PII key check of a snapshot another connection writes is left for a later run, at once", async () => {
    // The webhook worker opens the snapshot on the thread that answers deliveries: a wait for the
    // busy timeout there stalled every delivery for 10 s (receiver.test.ts). The holder lets go by
    // itself after 5 s, inside the 10 s busy timeout: a step that waited would get the lock then
    // and record.
    const path = snapshot();
    const raw = new BetterSqlite3(path);
    raw.prepare("DELETE FROM _meta WHERE key = ?").run(PII_KEY_CHECK_META);
    raw.close();
    const holder = await holdWriteLock(path, 5_000);
    let outcome: string;
    try {
      outcome = resolveSnapshotPiiKey(path, "lock-wait-test-pii-key-0123456789").outcome;
    } finally {
      await holder.release();
    }
    expect(outcome).toBe("unchecked");
    // Not recorded: the next run that can take the lock records it.
    expect(resolveSnapshotPiiKey(path, "lock-wait-test-pii-key-0123456789").outcome).toBe("first");
  });
});

/**
 * A group of pages holds the snapshot's write lock from its start. A deferred transaction that has
 * read gets SQLITE_BUSY, at once and without waiting, when it writes after another connection
 * committed (a scheduler claiming a fire, a webhook receiver, an analyst): the run would fail for
 * nothing. Found by two schedulers on one snapshot (test/integration/jobs/scheduler.test.ts).
 */
import BetterSqlite3 from "better-sqlite3";
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterEach, describe, expect, it } from "vitest";
import { openDatabase } from "../../../src/store/file/database.js";
import type { ActiveRun } from "../../../src/store/runs/run-state.js";
import { PageGroups } from "../../../src/store/walk/transactions.js";

let dir: string | undefined;
afterEach(() => {
  if (dir) rmSync(dir, { recursive: true, force: true });
  dir = undefined;
});

describe("a group of pages and another writer", () => {
  it("another connection waits for the group (and gives up) instead of committing between its reads and its writes", () => {
    dir = mkdtempSync(join(tmpdir(), "bsync-lock-"));
    const path = join(dir, "snap.db");
    const db = openDatabase(path);
    const other = new BetterSqlite3(path);
    other.pragma("busy_timeout = 50");
    try {
      const run = { counts: new Map(), quarantinedByScope: new Map(), dryRun: false, claimsInGroup: [] } as unknown as ActiveRun;
      const groups = new PageGroups(db, { commitEveryPages: 100, commitEveryMs: 1e9 }, () => undefined);
      groups.ensure(run);
      db.prepare("SELECT COUNT(*) FROM _runs").pluck().get(); // the group reads first, as a page does
      expect(() => other.prepare("INSERT INTO _meta (key, value) VALUES ('other', 'x')").run()).toThrow(/locked|busy/i);
      db.prepare("INSERT INTO _meta (key, value) VALUES ('ours', 'y')").run(); // and then writes
      groups.commit(run);
      expect(other.prepare("SELECT key FROM _meta WHERE key IN ('ours', 'other')").pluck().all()).toEqual(["ours"]);
      // Once the group committed, the other writer goes through.
      other.prepare("INSERT INTO _meta (key, value) VALUES ('other', 'x')").run();
    } finally {
      other.close();
      db.close();
    }
  });
});

import { afterEach } from "vitest";
import type { Database } from "better-sqlite3";
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { openDatabase } from "../../src/store/file/database.js";
import { SnapshotStore } from "../../src/store/snapshot.js";
import { sync, type StartedRunReport, type SyncOptions } from "../../src/pipeline/sync.js";

export const TEST_PII_KEY = Buffer.from("test-pii-key-0123456789abcdef");

/** A snapshot on a real file in a fresh temp dir; `cleanup()` closes and removes it. */
export interface TempStore {
  dir: string;
  path: string;
  db: Database;
  store: SnapshotStore;
  cleanup(): void;
}

export function tempStore(opts: { dir?: string } = {}): TempStore {
  const dir = opts.dir ?? mkdtempSync(join(tmpdir(), "bsync-"));
  const path = join(dir, "snapshot.db");
  const db = openDatabase(path);
  const store = new SnapshotStore(db, { piiKey: TEST_PII_KEY, commitEveryPages: 2 });
  return {
    dir,
    path,
    db,
    store,
    cleanup() {
      db.close();
      rmSync(dir, { recursive: true, force: true });
    },
  };
}

/** One sync run that must start (a busy or unclaimable snapshot fails the test): its report has a run id. */
export async function syncStarted(opts: SyncOptions): Promise<StartedRunReport> {
  const r = await sync(opts);
  if (r.runId === null) throw new Error(`no run started (${r.status}): ${r.error.message}`);
  return r;
}

/**
 * For a test file: a function that makes a temp store, each one cleaned up after its test.
 *
 * @example const setup = useTempStores(); it("...", () => { const t = setup(); ... });
 */
export function useTempStores(): () => TempStore {
  let made: TempStore[] = [];
  afterEach(() => {
    for (const t of made.reverse()) t.cleanup();
    made = [];
  });
  return () => {
    const t = tempStore();
    made.push(t);
    return t;
  };
}

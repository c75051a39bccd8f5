/**
 * The run lease at its edges, on an injected clock (no timing): two starts in the same
 * millisecond, a start at the very millisecond another run's lease ends, and a run that starts in
 * the millisecond the previous one finished. And the start is stamped while the write lock is
 * held, checked by the clock itself: it notes whether the store was inside its transaction each
 * time it was asked (a stamp taken before the lock makes a run that waited for the previous one's
 * final commit look as if it overlapped it).
 */
import { describe, expect, it } from "vitest";
import type { Database } from "better-sqlite3";
import { openDatabase } from "../../../src/store/file/database.js";
import { defaultDeletePolicy } from "../../../src/store/runs/run-state.js";
import { SnapshotStore } from "../../../src/store/snapshot.js";
import { TEST_PII_KEY, useTempStores } from "../../helpers/temp-store.js";

const setup = useTempStores();
const T = new Date("2026-11-23T02:00:00.000Z");
const LEASE_MS = 60_000;
const at = (ms: number) => new Date(T.getTime() + ms);

/** A second store on the same file, on a clock the test sets. */
function storeOn(path: string, clock: () => Date): SnapshotStore {
  return new SnapshotStore(openDatabase(path), { piiKey: TEST_PII_KEY, now: clock, leaseMs: LEASE_MS });
}
const running = (db: Database) => db.prepare("SELECT run_id FROM _runs WHERE status = 'running'").pluck().all() as number[];

describe("the run lease on an injected clock", () => {
  it("two starts in the same millisecond: the first proceeds, the second is refused as busy", () => {
    const t = setup();
    const first = storeOn(t.path, () => T);
    const second = storeOn(t.path, () => T);
    try {
      const run = first.startRun("sync", {});
      expect(() => second.startRun("sync", {})).toThrow(expect.objectContaining({ code: "SNAPSHOT_BUSY" }));
      expect(running(t.db)).toEqual([run.runId]);
      expect(t.db.prepare("SELECT lease_until FROM _runs WHERE run_id = ?").pluck().get(run.runId)).toBe(at(LEASE_MS).toISOString());
    } finally {
      first.db.close();
      second.db.close();
    }
  });

  it("a start at the very millisecond another's lease ends is refused; one millisecond later the lapsed run is ended", () => {
    const t = setup();
    let now = T;
    const first = storeOn(t.path, () => T);
    const second = storeOn(t.path, () => now);
    try {
      const run = first.startRun("sync", {});
      now = at(LEASE_MS);
      expect(() => second.startRun("sync", {})).toThrow(expect.objectContaining({ code: "SNAPSHOT_BUSY" }));
      expect(running(t.db)).toEqual([run.runId]);
      now = at(LEASE_MS + 1);
      const next = second.startRun("sync", {});
      expect(running(t.db)).toEqual([next.runId]);
      const ended = t.db.prepare("SELECT status, error FROM _runs WHERE run_id = ?").get(run.runId) as { status: string; error: string };
      expect(ended.status).toBe("failed");
      // Another store's run in this process: judged by its lease alone.
      expect(ended.error).toMatch(new RegExp(`^ABANDONED: its lease lapsed at ${at(LEASE_MS).toISOString().replace(/\./g, "\\.")}`));
    } finally {
      first.db.close();
      second.db.close();
    }
  });

  it("a run that starts in the millisecond the previous one finished follows it, and is not resumed from it", () => {
    const t = setup();
    const first = storeOn(t.path, () => T);
    const second = storeOn(t.path, () => T);
    try {
      const a = first.startRun("sync", {});
      first.finishRun(defaultDeletePolicy);
      const b = second.startRun("sync", {});
      const row = (id: number) => t.db.prepare("SELECT status, started_at, finished_at, resumed_from FROM _runs WHERE run_id = ?").get(id) as Record<string, unknown>;
      expect(row(a.runId)).toEqual({ status: "succeeded", started_at: T.toISOString(), finished_at: T.toISOString(), resumed_from: null });
      expect(row(b.runId)).toEqual({ status: "running", started_at: T.toISOString(), finished_at: null, resumed_from: null });
    } finally {
      first.db.close();
      second.db.close();
    }
  });

  it("the start is stamped while the store holds the write lock", () => {
    const t = setup();
    // Each call gives the next millisecond and notes whether the store was in its transaction.
    const inLock = new Map<string, boolean>();
    let calls = 0;
    let db: Database | undefined;
    const clock = () => {
      const d = at(++calls);
      inLock.set(d.toISOString(), db!.inTransaction);
      return d;
    };
    const store = storeOn(t.path, clock);
    db = store.db;
    try {
      const run = store.startRun("sync", {});
      const started = t.db.prepare("SELECT started_at FROM _runs WHERE run_id = ?").pluck().get(run.runId) as string;
      expect(inLock.get(started), `started_at ${started}; clock calls ${JSON.stringify([...inLock])}`).toBe(true);
    } finally {
      store.db.close();
    }
  });
});

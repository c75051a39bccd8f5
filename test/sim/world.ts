/**
 * The world around the sync, on the store's side: a real snapshot file, and faults wrapped around
 * the SnapshotPort the sync drives.
 *
 * - Another process holding a write lock: a second connection on the same file runs
 *   `BEGIN IMMEDIATE` and a write, and holds it across some page applications; the store's
 *   connection has a 5 ms busy timeout, so SQLITE_BUSY really happens.
 * - An I/O error on a page: the port throws an error coded SQLITE_IOERR instead of applying it,
 *   after rolling back the open transaction itself when asked (as SQLite does on disk-full and
 *   I/O errors): the store must cope.
 * - A crash at a page: the connection is closed (uncommitted work rolls back, as after kill -9)
 *   and every later call of that port rejects. The next run opens a new connection and a new
 *   SnapshotStore whose clock has moved past the run lease: it should resume the dead run.
 *
 * Each fault is keyed to the n-th page application of a run, so it lands at the same place on
 * every replay; so does `onPage`, what else happens while the run holds the snapshot.
 */
import BetterSqlite3 from "better-sqlite3";
import type { Database } from "better-sqlite3";
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { openDatabase } from "../../src/store/file/database.js";
import { SnapshotStore } from "../../src/store/snapshot.js";
import { inProcessPort, type SnapshotPort } from "../../src/store/snapshot-port.js";
import { openWorkerSnapshot, type WorkerSnapshot } from "../../src/store/worker-port.js";

export const SIM_PII_KEY = Buffer.from("sim-pii-key-b6e1f0c2d3a4958677");
/** The run lease the store is asked for (its default); a crash moves the clock past it. */
export const LEASE_MS = 120_000;

export interface StoreRunFaults {
  /** Another process takes the write lock at the `at`-th page (or the first page after it that it can) and holds it for `hold` pages. */
  readonly lock: { readonly at: number; readonly hold: number; readonly commit: boolean } | null;
  /** The `at`-th page fails with SQLITE_IOERR; `rollback`: SQLite rolled the transaction back first. */
  readonly io: { readonly at: number; readonly rollback: boolean } | null;
  /** The process dies at the `at`-th page (0: while finishing the run). */
  readonly crash: { readonly at: number } | null;
}

export const NO_STORE_FAULTS: StoreRunFaults = { lock: null, io: null, crash: null };

export interface StoreRunStats {
  pages: number;
  lockHeld: number;
  lockTried: number;
  ioErrors: number;
  crashed: boolean;
}

/** A simulated clock: the store's `now`, moved by the schedule (days, runs, lapsed leases). */
export class SimClock {
  private t = Date.UTC(2026, 2, 1, 2, 0, 0);
  now = (): Date => new Date(this.t);
  advance(ms: number): void {
    this.t += ms;
  }
}

export class World {
  readonly dir: string;
  readonly path: string;
  readonly clock = new SimClock();
  db!: Database;
  store!: SnapshotStore;
  /** The other process's connection. */
  private readonly other: Database;
  private holding = false;
  private run: { faults: StoreRunFaults; stats: StoreRunStats; heldSince: number; dead: boolean; worker?: WorkerSnapshot } | undefined;
  /** Stores whose connection "died": kept only to be sure nothing uses them. */
  crashes = 0;

  constructor(private readonly opts: { commitEveryPages: number; encodeOnCaller: boolean; onCrash?: () => void }) {
    this.dir = mkdtempSync(join(tmpdir(), "bsync-sim-"));
    this.path = join(this.dir, "snapshot.db");
    this.open();
    this.other = new BetterSqlite3(this.path);
    this.other.pragma("busy_timeout = 0");
    this.other.exec("CREATE TABLE IF NOT EXISTS sim_other_writer (n INTEGER)");
  }

  private storeOptions() {
    return {
      piiKey: SIM_PII_KEY,
      now: this.clock.now,
      commitEveryPages: this.opts.commitEveryPages,
      // Commits by page count only: a commit that depends on wall time would not replay.
      commitEveryMs: 1e9,
      leaseMs: LEASE_MS,
    };
  }

  private open(): void {
    this.db = openDatabase(this.path);
    this.db.pragma("busy_timeout = 5");
    this.store = new SnapshotStore(this.db, this.storeOptions());
  }

  /**
   * The port a run drives, with this run's faults around it: the store's in-process port, or
   * (`onWorker`) a store on its own worker thread, opened for this run and closed after it. That
   * store keeps wall time (a clock cannot be posted to a thread), so it gets no crash: the next
   * run would find the dead run's lease unexpired.
   */
  async beginRun(faults: StoreRunFaults, onWorker = false, onPage?: (n: number) => Promise<void>): Promise<SnapshotPort> {
    const stats: StoreRunStats = { pages: 0, lockHeld: 0, lockTried: 0, ioErrors: 0, crashed: false };
    if (onWorker && faults.crash) throw new Error("the simulation gives no crash to a store on its worker thread");
    const worker = onWorker ? await openWorkerSnapshot(this.path, this.storeOptions()) : undefined;
    const run = { faults, stats, heldSince: 0, dead: false, ...(worker ? { worker } : {}) };
    this.run = run;
    const inner = (worker ?? inProcessPort(this.store)) as unknown as Record<string, unknown>;
    const db = this.db;
    const crashError = () => Object.assign(new Error("the process was killed (simulated crash)"), { code: "SIM_CRASH" });
    const alive = <T>(fn: () => T): T => {
      if (!run.dead) return fn();
      throw crashError();
    };
    // Every call of the port passes through (whatever the port offers), and fails once the process is dead.
    const port: Record<string, unknown> = {};
    for (const [k, v] of Object.entries(inner)) {
      if (k === "encoding" || k === "close") continue;
      port[k] =
        typeof v === "function"
          ? (...args: unknown[]) => {
              if (!run.dead) return (v as (...a: unknown[]) => unknown)(...args);
              if (k === "heartbeat") return undefined;
              return Promise.reject(crashError());
            }
          : v;
    }
    // With `encoding`, the sync prepares pages itself and recognises known pages by their bytes, as
    // it does with the store on its worker thread (the production path); without, it hands over items.
    if (worker) port.encoding = worker.encoding;
    else if (this.opts.encodeOnCaller) port.encoding = this.store.encoder.options;
    const innerApply = inner.applyPage as SnapshotPort["applyPage"];
    const innerFinish = inner.finishRun as SnapshotPort["finishRun"];
    // Pages are applied in the order the sync hands them over, as both real ports do (the store
    // in this process applies each at once; the worker thread takes its messages in order). The
    // hook below awaits (webhook events sent, the worker draining): without this queue the next
    // page overtook the held one, and a fault on the held page rolled it back after the later
    // page had already committed its scope's end (seed 3249: a group deleted while listed).
    let refused: Error | undefined;
    let inFlight = 0;
    let previous: Promise<unknown> = Promise.resolve();
    const applyInOrder = <T>(go: () => Promise<T>): Promise<T> => {
      const p = inFlight === 0 ? go() : previous.then(go, go);
      inFlight++;
      const settled = () => {
        inFlight--;
      };
      previous = p.then(settled, settled);
      return p;
    };
    port.applyPage = ((scope, page) =>
      applyInOrder(() => alive(async () => {
        const n = ++stats.pages;
        // Something else happening while the run holds the snapshot (webhook events, the worker).
        if (onPage) await onPage(n);
        this.lockStep(n);
        if (faults.crash && faults.crash.at === n) {
          this.crash();
          throw crashError();
        }
        // A store whose page failed refuses every later page of the run (PageGroups.abort marks
        // the run failed). The fault below is injected in front of the store, which never hears
        // of it: the store on its worker thread, fed several pages at once by a walk of groups
        // in parallel, then applied a later page of the failed page's scope and committed a
        // cursor past it (seed 4670: the resumed run deleted a listed group and its plans).
        if (refused) throw refused;
        if (faults.io && faults.io.at === n) {
          stats.ioErrors++;
          if (faults.io.rollback && db.inTransaction) db.exec("ROLLBACK");
          refused = Object.assign(new Error("disk I/O error (simulated)"), { code: "SQLITE_IOERR" });
          throw refused;
        }
        return innerApply(scope, page);
      }))) satisfies SnapshotPort["applyPage"];
    port.finishRun = (async (policy, failure) =>
      alive(async () => {
        this.release();
        if (faults.crash && faults.crash.at === 0) {
          this.crash();
          throw crashError();
        }
        return innerFinish(policy, failure);
      })) satisfies SnapshotPort["finishRun"];
    return port as unknown as SnapshotPort;
  }

  /** The other process takes the lock when it can, holds it for a few pages, then lets go. */
  private lockStep(n: number): void {
    const run = this.run!;
    const lock = run.faults.lock;
    if (!lock) return;
    if (this.holding) {
      run.stats.lockHeld++;
      if (n - run.heldSince >= lock.hold) this.release();
      return;
    }
    if (n < lock.at || run.heldSince > 0) return;
    run.stats.lockTried++;
    try {
      // Fails at once while the store's own transaction holds the write lock: try at the next page.
      this.other.exec("BEGIN IMMEDIATE");
    } catch {
      return;
    }
    this.other.prepare("INSERT INTO sim_other_writer (n) VALUES (?)").run(n);
    this.holding = true;
    run.heldSince = n;
  }

  private release(): void {
    if (!this.holding) return;
    this.other.exec(this.run?.faults.lock?.commit ? "COMMIT" : "ROLLBACK");
    this.holding = false;
  }

  private crash(): void {
    const run = this.run!;
    this.release();
    run.dead = true;
    run.stats.crashed = true;
    this.crashes++;
    this.opts.onCrash?.();
    // Closing rolls back whatever was not committed, as the death of the process would.
    this.db.close();
  }

  /** After a run: a crashed process is replaced by a new one, whose clock is past the lease. */
  async endRun(): Promise<StoreRunStats> {
    const run = this.run!;
    this.release();
    this.run = undefined;
    await run.worker?.close();
    if (run.dead) {
      this.clock.advance(LEASE_MS + 60_000);
      this.open();
    }
    return run.stats;
  }

  close(): void {
    this.release();
    try {
      this.other.close();
    } catch {
      /* closed */
    }
    try {
      this.db.close();
    } catch {
      /* closed */
    }
  }

  remove(): void {
    rmSync(this.dir, { recursive: true, force: true });
  }
}

/**
 * When a group of pages commits, and what happens when one fails. Pages are applied inside one
 * transaction per group (a commit per page would dominate the walk); each group commits with the
 * walk's checkpoints, the run's counts and a renewed lease, so a crash at any moment leaves a file
 * whose checkpoints describe exactly the pages it holds.
 *
 * The truth about whether a transaction is open is SQLite's (`db.inTransaction`), never a flag of
 * ours: after a disk-full or I/O error SQLite may already have rolled back on its own, and the
 * store must not carry on as if it were still inside one.
 */
import type { Database } from "better-sqlite3";
import { copyCounters, type ActiveRun } from "../runs/run-state.js";

export interface GroupLimits {
  readonly commitEveryPages: number;
  /** Pages recognised by their bytes (see SnapshotOptions); `commitEveryPages` when not given. */
  readonly commitEveryKnownPages?: number;
  readonly commitEveryMs: number;
}

export class PageGroups {
  private pages = 0;
  private knownPages = 0;
  private started = 0;
  /** The run's counters as they were when the open group began: what a rollback puts back. */
  private saved: ReturnType<typeof copyCounters> | undefined;

  constructor(
    private readonly db: Database,
    private readonly limits: GroupLimits,
    /** Writes that go with every commit: the run's counts and its lease. */
    private readonly beforeCommit: (run: ActiveRun) => void,
    /** Called holding the write lock as each transaction opens; throws to write nothing (the key check, key-guard.ts). */
    private readonly onBegin: () => void = () => {},
  ) {}

  /** BEGIN IMMEDIATE, then `onBegin` under the lock (rolled back if it throws). */
  private begin(): void {
    this.db.exec("BEGIN IMMEDIATE");
    try {
      this.onBegin();
    } catch (e) {
      this.db.exec("ROLLBACK");
      throw e;
    }
  }

  /** Open a group of pages unless one is open. */
  ensure(run: ActiveRun): void {
    if (this.db.inTransaction) return;
    // IMMEDIATE: the write lock is taken (waiting up to busy_timeout) before the group reads.
    // A deferred transaction that reads first and then writes after another connection committed
    // (a scheduler claiming a fire, a webhook receiver, an analyst's own table) gets SQLITE_BUSY at
    // once, with no wait, and the run fails for nothing.
    this.begin();
    this.pages = 0;
    this.knownPages = 0;
    this.started = Date.now();
    this.saved = copyCounters(run);
  }

  /** A page is applied (`known`: recognised by its bytes): commit the group when it is large or old enough. */
  pageDone(run: ActiveRun, known = false): void {
    if (known) this.knownPages++;
    else this.pages++;
    if (run.dryRun) return;
    const large = this.pages >= this.limits.commitEveryPages || this.knownPages >= (this.limits.commitEveryKnownPages ?? this.limits.commitEveryPages);
    if (large || Date.now() - this.started >= this.limits.commitEveryMs) this.commit(run);
  }

  /** Commit the group in progress (with the run's counts and lease). A dry run never commits. */
  commit(run: ActiveRun): void {
    if (!this.db.inTransaction || run.dryRun) return;
    this.beforeCommit(run);
    this.db.exec("COMMIT");
    this.saved = undefined;
    run.claimsInGroup = [];
  }

  /**
   * A page could not be applied: roll the open group back (unless SQLite already did) and put
   * the run's counters back to what the file holds. The run is marked failed: nothing more is
   * applied, so no later checkpoint can move a cursor past the lost pages.
   */
  abort(run: ActiveRun, failure: { code: string; message: string }): void {
    if (this.db.inTransaction) {
      try {
        this.db.exec("ROLLBACK");
      } catch {
        // SQLite rolled back on its own between the check and here: nothing is open either way.
      }
    }
    if (this.saved) {
      run.counts = this.saved.counts;
      run.quarantinedByScope = this.saved.quarantined;
      this.saved = undefined;
    }
    for (const id of run.claimsInGroup) run.unkeptClaims.add(id);
    run.claimsInGroup = [];
    run.failed ??= failure;
  }

  /** Run `fn` inside the open group, or in a transaction of its own. */
  tx(fn: () => void): void {
    if (this.db.inTransaction) fn();
    else this.db.transaction(fn).immediate();
  }

  /**
   * Open the transaction that ends a run. The walk's pending group is committed first: SQLite
   * cannot change `synchronous` inside a transaction, and the final commit must be FULL.
   */
  beginFinal(run: ActiveRun): void {
    if (run.dryRun) return;
    this.commit(run);
    this.db.pragma("synchronous = FULL");
    try {
      this.begin();
    } catch (e) {
      this.db.pragma("synchronous = NORMAL");
      throw e;
    }
  }

  /** Commit the run's last transaction durably (fsynced before any sink reads it). */
  durableCommit(): void {
    try {
      this.db.exec("COMMIT");
    } finally {
      if (this.db.inTransaction) this.db.exec("ROLLBACK");
      this.db.pragma("synchronous = NORMAL");
    }
  }

  /** Give up whatever is open (a dry run's whole transaction, or a failed final one). */
  rollback(): void {
    if (this.db.inTransaction) this.db.exec("ROLLBACK");
    this.saved = undefined;
  }
}

/**
 * The snapshot: a small facade over the parts that each own one rule.
 *
 * | file               | the rule it owns                                                      |
 * |--------------------|-----------------------------------------------------------------------|
 * | run-lifecycle.ts   | how a run starts (claim, resume), ends, and when it may delete         |
 * | run-lease.ts       | when a run is dead (lapsed lease, gone process, abandoned by hand)     |
 * | transactions.ts    | when a group of pages commits, and what a failed page rolls back       |
 * | page-apply.ts      | how a page becomes versions (the hot path)                             |
 * | page-cache.ts      | when a page may be recognised by its bytes                             |
 * | seen-ids.ts        | which ids a walk has seen (first and second sightings)                 |
 * | checkpoints.ts     | where a scope's walk stands, committed with its pages                  |
 * | delete-plan.ts     | which records a walk proves gone, and the delete guard                 |
 */
import type { Database } from "better-sqlite3";
import { DiskFullError, redact } from "../errors.js";
import { Checkpoints } from "./runs/checkpoints.js";
import { asDiskFull } from "./file/disk-full.js";
import { tryEmptyWal } from "./file/erasure.js";
import { claimsToVerify, deleteCandidates, type DeleteCandidates } from "./walk/delete-plan.js";
import { PageApplier } from "./walk/page-apply.js";
import { PageCache, type KnownPage } from "./walk/page-cache.js";
import { Encoder, type PreparedPage } from "./walk/prepare-page.js";
import { RunLifecycle } from "./runs/run-lifecycle.js";
import { refuseIfHeld } from "./runs/run-lease.js";
import type { ActiveRun, DeletePolicy, RunOutcome, ScopeState, SnapshotOptions } from "./runs/run-state.js";
import type { StoredResource } from "./schema/resources.js";
import { isLookup, type Scope } from "./walk/scopes.js";
import { SeenIds } from "./walk/seen-ids.js";
import { RunStartFailedError } from "./runs/start-failure.js";
import { scrubStoredSsns } from "./pii/ssn-scrub.js";
import { SnapshotKeyGuard } from "./pii/key-guard.js";
import { PageGroups } from "./walk/transactions.js";
import { versionStatements } from "./walk/versions.js";

export { defaultDeletePolicy } from "./runs/run-state.js";
export type { ActiveRun, DeletePolicy, RunFailure, RunOutcome, ScopeState, SnapshotOptions } from "./runs/run-state.js";

import { DEFAULT_LEASE_MS } from "./runs/run-lease.js";

export class SnapshotStore {
  readonly db: Database;
  /** Validation, fingerprints and canonical JSON: the part of a page's work that needs no database. */
  readonly encoder: Encoder;
  private readonly groups: PageGroups;
  private readonly pages: PageCache;
  private readonly checkpoints: Checkpoints;
  private readonly seen: SeenIds;
  private readonly applier: PageApplier;
  private readonly lifecycle: RunLifecycle;
  private readonly clock: () => Date;
  private readonly keyGuard: SnapshotKeyGuard;
  private run: ActiveRun | undefined;

  constructor(db: Database, opts: SnapshotOptions) {
    this.db = db;
    this.clock = opts.now ?? (() => new Date());
    this.encoder = new Encoder({ piiKey: opts.piiKey, piiMode: opts.piiMode ?? "token", idFields: opts.idFields ?? {} });
    const versions = versionStatements(db);
    const seen = new SeenIds(db);
    this.seen = seen;
    this.pages = new PageCache(db);
    this.checkpoints = new Checkpoints(db);
    const limits = {
      commitEveryPages: opts.commitEveryPages ?? 32,
      commitEveryKnownPages: opts.commitEveryKnownPages ?? opts.commitEveryPages ?? 256,
      commitEveryMs: opts.commitEveryMs ?? 500,
    };
    const keyGuard = new SnapshotKeyGuard(db, opts.piiKey);
    this.keyGuard = keyGuard;
    this.groups = new PageGroups(
      db,
      limits,
      (run) => this.lifecycle.beforeCommit(run),
      () => keyGuard.assertCurrent(),
    );
    const now = () => this.clock().toISOString();
    this.applier = new PageApplier({ db, versions, encoder: this.encoder, seen, pages: this.pages, groups: this.groups, checkpoints: this.checkpoints, now });
    this.lifecycle = new RunLifecycle({
      db,
      versions,
      seen,
      pages: this.pages,
      groups: this.groups,
      checkpoints: this.checkpoints,
      leaseMs: opts.leaseMs ?? DEFAULT_LEASE_MS,
      now: this.clock,
      keyGuard,
    });
  }

  /** How often a caller waiting on the network should renew the run's lease. */
  get heartbeatMs(): number {
    return Math.max(1000, Math.floor(this.lifecycle.lease.leaseMs / 4));
  }

  /**
   * Claim the snapshot and start a run (see RunLifecycle.start). Throws SnapshotBusyError, with
   * nothing changed, while another live run holds the snapshot.
   */
  startRun(job: string, options: Record<string, unknown>, flags: { dryRun?: boolean; resume?: boolean } = {}): ActiveRun {
    if (this.run) throw new Error(`run ${this.run.runId} is still active on this store`);
    let claimed: number | undefined;
    try {
      this.run = this.lifecycle.start(job, options, flags, (id) => (claimed = id));
      if (!flags.dryRun) scrubStoredSsns(this.db, this.encoder.masker, (r) => this.encoder.ownIdFields(r));
      this.pages.prune(this.run.runId);
      return this.run;
    } catch (e) {
      this.run = undefined;
      const full = asDiskFull(e, this.db.name);
      if (claimed === undefined) throw full;
      if (flags.dryRun) {
        // A dry run's claim is in the transaction it never commits: rolled back, no run is left.
        if (this.db.inTransaction) this.db.exec("ROLLBACK");
        throw full;
      }
      // The run's row is committed: it is recorded failed now if that fits, else by the next run.
      const err = full instanceof Error ? full : new Error(String(full));
      const given = (err as { code?: unknown }).code;
      const code = typeof given === "string" ? given : err.name;
      throw new RunStartFailedError(claimed, this.recordFailure(claimed, code, err.message), { code, message: err.message });
    }
  }

  /**
   * The newest run's id (0 with none), after checking that no live run holds the snapshot
   * (SnapshotBusyError otherwise; nothing is written). A worker that refetches outside the lease
   * takes this first, and applies what it fetched only if its own run is the next one: then no
   * run held the snapshot, or began, while it fetched. A rekey records no run, so the mark also
   * refuses (SnapshotRekeyedError) once the snapshot is under another key than this store's: the
   * worker then opens it again with the new key rather than fetch for tokens it may not write.
   */
  runMark(): number {
    refuseIfHeld(this.db, this.lifecycle.lease);
    this.keyGuard.assertCurrent();
    return this.db.prepare("SELECT coalesce(max(run_id), 0) FROM _runs").pluck().get() as number;
  }

  /** The pages of a scope the walk may recognise by their bytes (see PageCache.ofScope). */
  knownPages(scope: string): KnownPage[] {
    this.active();
    return this.pages.ofScope(scope);
  }

  /** The current groups, parsed: a resumed groups walk saw only part of the list. */
  currentGroups(): unknown[] {
    return (this.db.prepare("SELECT data FROM groups").pluck().all() as string[]).map((d) => JSON.parse(d) as unknown);
  }

  /** Register a scope the run walks, and get where a resumed walk left it. */
  beginScope(scope: Scope): ScopeState {
    const run = this.active();
    run.scopes.set(scope.key, scope);
    let state = this.checkpoints.state(run.runId, scope);
    if (state && isLookup(scope) && (state.complete || state.cursor !== undefined)) {
      // A lookup applies only what it asks about now. The same lookup begun before (by a run this
      // one resumes, or by an earlier round of confirmations) asked about other records: its pages
      // read then kept nothing for this question, so it is read again whole, never resumed.
      this.groups.tx(() => this.checkpoints.restart(run.runId, scope));
      state = { ...state, cursor: undefined, complete: false };
    }
    run.quarantinedByScope.set(scope.key, state?.quarantined ?? 0);
    // A scope the chain walked to its end without completing it (a quarantined item) starts over.
    if (state && !state.complete && state.cursor === undefined && state.records > 0) run.rewalked.add(scope.key);
    if (!state) {
      this.groups.tx(() => this.checkpoints.begin(run.runId, scope));
      return { cursor: undefined, complete: false, pages: 0, records: 0 };
    }
    return { cursor: state.cursor, complete: state.complete, pages: state.pages, records: state.records };
  }

  /** Prepare and apply a page in one go (pages prepared elsewhere go to {@link applyPrepared}). */
  applyPage(scope: Scope, items: readonly unknown[], next: string | undefined, end: boolean, raw?: readonly string[]): void {
    const run = this.active();
    this.applyPrepared(scope, this.encoder.prepare(scope.resource, items, raw, run.empty.has(scope.resource)), next, end);
  }

  /**
   * Apply one prepared page of a scope's walk with its checkpoint (see PageApplier). When it
   * fails, the open group of pages is rolled back and the run applies nothing more: it can only
   * end failed, and the next run resumes from the last commit.
   */
  applyPrepared(scope: Scope, page: PreparedPage, next: string | undefined, end: boolean, pageFp?: { startAfter: string | undefined; fp: number }): void {
    // Claims a failure would lose are noted (see `unkeptClaims`), unless no claim was stored when
    // the chain began: then none can be stored outside the window, and a first load of millions of
    // claims keeps no list of them.
    const noted = scope.resource === "claims" && !this.active().fresh.has("claims") ? page.records : undefined;
    this.guarded((run) => this.applier.apply(run, scope, page, next, end, pageFp), noted);
  }

  /** The run's records of `resource` seen so far, as its summary counts them (0 with no run). */
  seenSoFar(resource: StoredResource): number {
    return this.run?.counts.get(resource)?.seen ?? 0;
  }

  /** Apply a page the walk recognised by its bytes: only the walk's bookkeeping happens. */
  applyKnownPage(scope: Scope, startAfter: string | undefined, fp: number, next: string | undefined, end: boolean): void {
    this.guarded((run) => this.applier.applyKnown(run, scope, startAfter, fp, next, end), undefined, true);
  }

  /** Claims the walk would prove gone by their stored date alone: the sync looks them up by member first. */
  claimsToVerify(): { memberId: string | null; ids: string[] }[] {
    const run = this.active();
    if (run.failed) return [];
    this.groups.commit(run);
    return claimsToVerify(this.db, run, this.checkpoints, this.seen);
  }

  /** What the run would delete, for the sync to confirm first (see deleteCandidates). */
  deleteCandidates(): DeleteCandidates {
    const run = this.active();
    if (run.failed) return { members: [], coverages: [], plans: [] };
    this.groups.commit(run);
    return deleteCandidates(this.db, run, this.seen, this.checkpoints);
  }

  /** Renew the active run's lease (between commits, while the walk waits on the network). */
  heartbeat(): void {
    const run = this.run;
    if (!run || run.failed || run.dryRun || this.db.inTransaction) return;
    try {
      this.lifecycle.renew(run);
    } catch {
      // Another writer holds the lock right now: the next commit or heartbeat renews it.
    }
  }

  /** Commit the group of pages in progress (with the run's counts). */
  commit(): void {
    const run = this.active();
    if (!run.failed) this.groups.commit(run);
  }

  /** End the run (see RunLifecycle.finish). The store is free for the next run afterwards. */
  finishRun(policy: DeletePolicy, failure?: { code?: string; message: string }): RunOutcome {
    const run = this.active();
    try {
      const outcome = this.lifecycle.finish(run, policy, failure);
      // What the run replaced (a version amended, versions taken back) leaves the WAL too (erasure.ts).
      tryEmptyWal(this.db);
      return outcome;
    } catch (e) {
      // A full disk may come as "disk I/O error" (disk-full.ts): the file system is asked.
      const full = asDiskFull(e, this.db.name);
      if (full instanceof DiskFullError && !run.dryRun) this.recordFailure(run.runId, "DISK_FULL", full.message);
      throw e;
    } finally {
      this.run = undefined;
    }
  }

  /**
   * Record a run failed after a write that failed (its end, or its start after the claim; the disk
   * full, most often). The rolled-back write gave its space back, so the one row that says the run
   * failed usually fits; when it does not (false), the next run finds the run dead and records it
   * failed.
   */
  private recordFailure(runId: number, code: string, message: string): boolean {
    try {
      if (this.db.inTransaction) this.db.exec("ROLLBACK");
      const changed = this.db
        .prepare("UPDATE _runs SET status = 'failed', finished_at = ?, error = ?, lease_until = NULL WHERE run_id = ? AND status = 'running'")
        .run(this.clock().toISOString(), `${code}: ${redact(message)}`, runId).changes;
      return changed > 0;
    } catch {
      // Still full: left to the next run.
      return false;
    }
  }

  /** Apply a page inside the open group; `claims`, a claims page's records (see `unkeptClaims`). */
  private guarded(apply: (run: ActiveRun) => void, claims?: readonly { readonly id: string }[], known = false): void {
    const run = this.active();
    if (run.failed) {
      if (!run.dryRun) for (const c of claims ?? []) run.unkeptClaims.add(c.id);
      throw new Error(`run ${run.runId} applies nothing more: ${run.failed.message}`);
    }
    if (claims && !run.dryRun) for (const c of claims) run.claimsInGroup.push(c.id);
    try {
      this.groups.ensure(run);
      apply(run);
      this.groups.pageDone(run, known);
    } catch (e) {
      const full = asDiskFull(e, this.db.name);
      const err = full instanceof Error ? full : new Error(String(full));
      const code = (err as { code?: unknown }).code;
      this.groups.abort(run, { code: typeof code === "string" ? code : err.name, message: redact(err.message) });
      throw full;
    }
  }

  private active(): ActiveRun {
    if (!this.run) throw new Error("no active run: call startRun first");
    return this.run;
  }
}

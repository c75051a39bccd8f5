/**
 * A run from start to end: claiming the snapshot (in one IMMEDIATE transaction with the check for
 * a live run), deciding whether it resumes a failed walk, and ending it. A run ends succeeded
 * only when no page failed; then deletes are proven scope by scope, held to the guard (a
 * violation fails the run and reverts what it applied), applied, and the run is marked succeeded
 * in a commit that is fsynced before any sink reads it. A failed run deletes nothing.
 */
import type { Database } from "better-sqlite3";
import { randomBytes } from "node:crypto";
import { DeleteGuardError, redact } from "../../errors.js";
import { deferIndexes, ensureIndexes } from "../schema/analyst-schema.js";
import { LoadCacheSize, StoreCacheSize } from "../schema/bulk-build.js";
import { ensureRollups } from "../schema/rollups.js";
import { canonicalJson } from "../walk/canonical.js";
import { emptyCounts } from "./counts.js";
import { planDeletes } from "../walk/delete-plan.js";
import { StoredResources, WalkedResources, type StoredResource } from "../schema/resources.js";
import { applyDeletes } from "./apply-deletes.js";
import { WEBHOOK_JOB, type RunRow } from "./run-log.js";
import { isLookup } from "../walk/scopes.js";
import { hostIdentity, isBusy, leaseUntil, lockedError, reapOrRefuse, type LeaseHolder } from "./run-lease.js";
import { countsObject, type ActiveRun, type DeletePolicy, type RunFailure, type RunOutcome } from "./run-state.js";
import { seenIdsSql, type SeenIds } from "../walk/seen-ids.js";
import type { Checkpoints } from "./checkpoints.js";
import type { PageCache } from "../walk/page-cache.js";
import type { SnapshotKeyGuard } from "../pii/key-guard.js";
import type { PageGroups } from "../walk/transactions.js";
import type { VersionStatements } from "../walk/versions.js";

export interface LifecycleDeps {
  readonly db: Database;
  readonly versions: Map<StoredResource, VersionStatements>;
  readonly seen: SeenIds;
  readonly pages: PageCache;
  readonly groups: PageGroups;
  readonly checkpoints: Checkpoints;
  readonly leaseMs: number;
  readonly now: () => Date;
  /** The run's key, checked against the snapshot's under the claim's write lock. */
  readonly keyGuard: SnapshotKeyGuard;
}

export class RunLifecycle {
  /** This store instance's identity in the run log (tells its own runs from another process's). */
  readonly lease: LeaseHolder;

  constructor(private readonly d: LifecycleDeps) {
    this.lease = { owner: randomBytes(8).toString("hex"), leaseMs: d.leaseMs, now: d.now };
  }

  /**
   * Claim the snapshot and start a run. Dead runs are marked failed first; a live one refuses with
   * SnapshotBusyError (nothing is changed). When the latest run failed with the same options, the
   * new run resumes its walk (its checkpoints and seen ids), recording no change twice.
   * `onClaimed` hears the run's id as soon as its row is committed: a failure after that leaves a run.
   */
  start(job: string, options: Record<string, unknown>, flags: { dryRun?: boolean; resume?: boolean }, onClaimed?: (runId: number) => void): ActiveRun {
    const { db, checkpoints } = this.d;
    const optionsJson = canonicalJson(options);
    const { pid, host } = hostIdentity();
    let resumedFrom: number | undefined;
    const claim = () => {
      // Stamped once the write lock is held: a run that waited for it (the previous run's final
      // commit) must not look as if it overlapped that run.
      const now = this.d.now().toISOString();
      reapOrRefuse(db, this.lease, false);
      // Re-keyed since this command read its key: refused before anything is written.
      const keyCheck = this.d.keyGuard.assertCurrent();
      // The webhook worker's runs walk nothing: a failed walk before them is still the one to resume.
      const last = db.prepare("SELECT * FROM _runs WHERE job <> ? ORDER BY run_id DESC LIMIT 1").get(WEBHOOK_JOB) as RunRow | undefined;
      const resumable =
        !flags.dryRun &&
        flags.resume !== false &&
        last !== undefined &&
        last.status === "failed" &&
        last.options === optionsJson &&
        !(last.error ?? "").startsWith("DELETE_GUARD") &&
        checkpoints.any(last.run_id);
      if (resumable) resumedFrom = last.run_id;
      const fresh = resumable ? (JSON.parse(last.fresh) as StoredResource[]) : this.emptyResources();
      const info = db
        .prepare(
          "INSERT INTO _runs (job, status, started_at, options, resumed_from, pid, host, fresh, owner, lease_until, pii_key_check) VALUES (?, 'running', ?, ?, ?, ?, ?, ?, ?, ?, ?)",
        )
        .run(job, now, optionsJson, resumedFrom ?? null, pid, host, JSON.stringify(fresh), this.lease.owner, leaseUntil(this.lease), keyCheck);
      const id = Number(info.lastInsertRowid);
      if (resumedFrom !== undefined) checkpoints.inherit(id, resumedFrom);
      // Seen ids of an abandoned walk prove nothing for this one (a run of lookups keeps them for its resume).
      else if (job !== WEBHOOK_JOB) this.d.seen.clear();
      return { id, fresh };
    };
    let claimed: { id: number; fresh: StoredResource[] };
    try {
      if (flags.dryRun) {
        // A dry run does everything in one transaction that finish() rolls back.
        db.exec("BEGIN IMMEDIATE");
        try {
          claimed = claim();
        } catch (e) {
          db.exec("ROLLBACK");
          throw e;
        }
      } else claimed = db.transaction(claim).immediate();
    } catch (e) {
      // The write lock stayed taken past the busy timeout: say by whom, not SQLITE_BUSY.
      throw isBusy(e) ? lockedError(db, this.lease) : e;
    }
    onClaimed?.(claimed.id);
    const fresh = new Set(claimed.fresh);
    // A fresh resource in the first run of its chain holds nothing yet: no lookups needed.
    const empty = resumedFrom === undefined ? fresh : new Set<StoredResource>();
    // A resource loaded from empty gets its indexes built once, when the run ends.
    deferIndexes(db, fresh, empty);
    ensureIndexes(db, { fresh, empty });
    // Such a load only appends: a small page cache until the run ends (see LoadCacheSize).
    if (empty.size > 0) db.pragma(`cache_size = ${LoadCacheSize}`);
    const run: ActiveRun = {
      runId: claimed.id,
      resumedFrom,
      dryRun: flags.dryRun ?? false,
      counts: new Map(StoredResources.map((r) => [r, emptyCounts()])),
      scopes: new Map(),
      rewalked: new Set(),
      quarantinedByScope: new Map(),
      claimsInGroup: [],
      unkeptClaims: new Set(),
      fresh,
      empty,
      walks: job !== WEBHOOK_JOB,
      vidsBefore: new Map(StoredResources.map((r) => [r, (db.prepare(`SELECT MAX(vid) FROM _${r}_v`).pluck().get() as number | null) ?? 0])),
    };
    return run;
  }

  /** Renew the run's lease (every commit does; the sync also calls this while it waits). */
  renew(run: ActiveRun): void {
    if (run.dryRun) return;
    this.d.db.prepare("UPDATE _runs SET lease_until = ? WHERE run_id = ? AND status = 'running'").run(leaseUntil(this.lease), run.runId);
  }

  /** Writes that go with every commit of a group of pages: counts and a renewed lease. */
  beforeCommit(run: ActiveRun): void {
    this.writeCounts(run);
    this.renew(run);
  }

  /** End the run: see the module comment. `failure` (or a page that failed) ends it failed. */
  finish(run: ActiveRun, policy: DeletePolicy, failure?: { code?: string; message: string }): RunOutcome {
    const { db, groups } = this.d;
    const why = run.failed ?? (failure ? { code: failure.code ?? "ERROR", message: failure.message } : undefined);
    db.pragma(`cache_size = ${StoreCacheSize}`);
    if (run.failed && !run.dryRun) groups.rollback();
    groups.beginFinal(run);
    // What the run loaded from empty is looked up from here on (dedupe, deletes, the next run):
    // the sync's indexes now; the analysts' on what it loaded when it succeeds.
    ensureIndexes(db, { fresh: run.fresh });
    this.dedupeFresh(run);
    if (why) return this.endFailed(run, why, false);
    const plan = planDeletes(db, run, policy, this.d.seen, this.d.checkpoints);
    const blocked = plan.filter((p) => p.blocked !== undefined);
    if (blocked.length > 0 && !policy.allowDeletes) {
      const message =
        `the run would delete ${blocked.map((p) => `${p.resource}: ${p.blocked}`).join("; ")}. ` +
        "Nothing was applied. If these records really are gone, run again with --allow-deletes";
      return this.endFailed(run, { code: new DeleteGuardError(message).code, message }, true);
    }
    for (const p of plan) applyDeletes(this.d.db, this.d.versions, run, p);
    if (run.walks) this.endWalk(run);
    // A run of lookups only (the webhook worker's) walked no listing: the last walk's pages stay
    // (its refetched members already made the pages that list them untrusted, see PageCache.prune).
    if ([...run.scopes.values()].some((s) => !isLookup(s))) this.d.pages.keepFrom(this.chainStart(run));
    ensureIndexes(db);
    db.prepare("UPDATE _runs SET status = 'succeeded', finished_at = ?, lease_until = NULL WHERE run_id = ?").run(this.d.now().toISOString(), run.runId);
    this.writeCounts(run);
    if (run.dryRun) return this.rollbackDryRun(run, "succeeded");
    groups.durableCommit();
    // Upkeep, after the success is committed: pages given back, and the statistics the planner
    // picks the guide's indexes by, refreshed where the run changed enough to matter (SQLite bounds
    // the work it does). A failure here (a disk that fills as the vacuum writes) leaves the run a
    // success; the next run does both again.
    for (const upkeep of ["incremental_vacuum", "optimize"]) {
      try {
        db.pragma(upkeep);
      } catch {
        break;
      }
    }
    return { runId: run.runId, status: "succeeded", counts: countsObject(run), resumedFrom: run.resumedFrom };
  }

  /**
   * A resource that was empty when the chain began is loaded without lookups (every record is an
   * insert), trusting that each record arrives once. One that moved during the walk to a scope or
   * parent walked later (a claim to another group, a coverage to another member) arrived twice:
   * its later sighting is the newer state, so the earlier insert is removed.
   */
  private dedupeFresh(run: ActiveRun): void {
    // Only these can arrive twice: a member's second sighting is skipped, and designs and groups
    // are one scope each, whose walk stops at a repeated id.
    for (const r of (["plans", "coverages", "claims"] as const).filter((x) => run.fresh.has(x))) {
      const removed = this.d.db
        .prepare(
          `DELETE FROM _${r}_v WHERE valid_to_run IS NULL AND vid IN (
             SELECT v.vid FROM _${r}_v v JOIN (
               SELECT id, MAX(vid) AS keep FROM _${r}_v WHERE valid_to_run IS NULL GROUP BY id HAVING COUNT(*) > 1
             ) d ON d.id = v.id
             WHERE v.valid_to_run IS NULL AND v.vid <> d.keep)`,
        )
        .run().changes;
      if (removed > 0) run.counts.get(r)!.inserted -= removed;
      // Its pages list those ids twice: see SeenIds.count.
      if (removed > 0 && r === "claims") this.d.pages.forgetResource(r);
    }
  }

  /** What a walk that succeeded settles by the ids it saw; then they are forgotten. */
  private endWalk(run: ActiveRun): void {
    const { db } = this.d;
    if (db.prepare("SELECT 1 FROM _absence LIMIT 1").get()) {
      for (const r of new Set([...run.scopes.values()].map((x) => x.resource))) {
        db.prepare(`DELETE FROM _absence WHERE resource = ? AND id IN (${seenIdsSql(r)})`).run(r, r);
      }
    }
    this.settleSuspects();
    for (const r of WalkedResources) if (r !== "members" && this.d.seen.duplicated(r)) this.d.pages.forgetResource(r);
    this.d.seen.clear();
  }

  /**
   * Suspects a run that succeeded settled: read again (seen), or proven gone by their member's
   * claims. The others (their member was not looked up) wait for a later run.
   */
  private settleSuspects(): void {
    const { db } = this.d;
    if (!db.prepare("SELECT 1 FROM _suspects LIMIT 1").get()) return;
    db.prepare(
      `DELETE FROM _suspects WHERE resource = 'claims'
       AND (id IN (${seenIdsSql("claims")}) OR id NOT IN (SELECT id FROM _claims_v WHERE valid_to_run IS NULL))`,
    ).run("claims");
  }

  private rollbackDryRun(run: ActiveRun, status: "succeeded" | "failed", failure?: RunFailure): RunOutcome {
    this.d.groups.rollback();
    return { runId: run.runId, status, counts: countsObject(run), resumedFrom: undefined, dryRun: true, ...(failure ? { failure } : {}) };
  }

  private endFailed(run: ActiveRun, failure: RunFailure, revert: boolean): RunOutcome {
    const { db } = this.d;
    // Whatever the failure quotes, no SSN or key reaches the run log.
    const clean = { code: failure.code, message: redact(failure.message) };
    if (run.dryRun) return this.rollbackDryRun(run, "failed", clean);
    const suspect = db.prepare("INSERT OR IGNORE INTO _suspects (resource, id, run_id) VALUES ('claims', ?, ?)");
    for (const id of run.unkeptClaims) suspect.run(id, run.runId);
    if (revert) {
      // What the run wrote is undone: a claim it read back into the window is as unkept as one
      // on a failed page.
      db.prepare("INSERT OR IGNORE INTO _suspects (resource, id, run_id) SELECT 'claims', id, ? FROM _claims_v WHERE valid_from_run = ?").run(run.runId, run.runId);
      for (const r of StoredResources) {
        db.prepare(`DELETE FROM _${r}_v WHERE valid_from_run = ?`).run(run.runId);
        db.prepare(`UPDATE _${r}_v SET valid_to_run = NULL, ended_by = NULL WHERE valid_to_run = ?`).run(run.runId);
      }
      this.d.checkpoints.drop(run.runId);
      // The pages this run stored may describe versions that are gone now, and a fingerprint it
      // kept may describe a record whose children were put back: read everything again next time.
      this.d.pages.clear();
      for (const r of StoredResources) db.prepare(`UPDATE _${r}_v SET fp = NULL WHERE valid_to_run IS NULL AND fp IS NOT NULL`).run();
      this.d.seen.clear();
      for (const c of run.counts.values()) Object.assign(c, { inserted: 0, updated: 0, deleted: 0 });
    }
    // Counts a load dropped the triggers of are counted again now, not at a next run's end, so
    // the views over them agree with what the failed run left (rollups.ts).
    ensureRollups(db);
    // A failed run's pages are never trusted.
    this.d.pages.dropRun(run.runId);
    this.writeCounts(run);
    db.prepare("UPDATE _runs SET status = 'failed', finished_at = ?, error = ?, lease_until = NULL WHERE run_id = ?").run(
      this.d.now().toISOString(),
      `${clean.code}: ${clean.message}`,
      run.runId,
    );
    this.d.groups.durableCommit();
    return { runId: run.runId, status: "failed", counts: countsObject(run), resumedFrom: run.resumedFrom, failure: clean };
  }

  /** The first run of the chain of resumed runs that the active run finishes. */
  private chainStart(run: ActiveRun): number {
    let first = run.runId;
    let prev = run.resumedFrom ?? null;
    while (prev !== null) {
      first = prev;
      prev = (this.d.db.prepare("SELECT resumed_from FROM _runs WHERE run_id = ?").pluck().get(prev) as number | null | undefined) ?? null;
    }
    return first;
  }

  /** The resources that hold no current record. */
  private emptyResources(): StoredResource[] {
    return StoredResources.filter((r) => this.d.db.prepare(`SELECT 1 FROM _${r}_v WHERE valid_to_run IS NULL LIMIT 1`).get() === undefined);
  }

  private writeCounts(run: ActiveRun): void {
    const upsert = this.d.db.prepare(
      `INSERT INTO _run_counts (run_id, resource, seen, inserted, updated, deleted, unchanged, quarantined)
       VALUES (@run_id, @resource, @seen, @inserted, @updated, @deleted, @unchanged, @quarantined)
       ON CONFLICT (run_id, resource) DO UPDATE SET seen = excluded.seen, inserted = excluded.inserted,
         updated = excluded.updated, deleted = excluded.deleted, unchanged = excluded.unchanged, quarantined = excluded.quarantined`,
    );
    for (const [resource, c] of run.counts) {
      if (Object.values(c).some((n) => n > 0)) upsert.run({ run_id: run.runId, resource, ...c });
    }
  }
}

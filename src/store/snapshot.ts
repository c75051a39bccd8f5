import type { Database, Statement } from "better-sqlite3";
import { hostname } from "node:os";
import { DeleteGuardError } from "../errors.js";
import { canonicalJson } from "./canonical.js";
import { Encoder, type PreparedPage, type PreparedRecord, type Problem } from "./prepare-page.js";
import { emptyCounts, type ResourceCounts } from "./counts.js";
import { changedFields } from "./field-diff.js";
import type { PiiMode } from "./pii.js";
import { ChildOf, StoredResources, type StoredResource, type WalkedResource } from "./resources.js";
import { liveRun, markDeadRuns, type RunRow } from "./run-log.js";
import { planDeletes, seenIdsSql } from "./delete-plan.js";
import type { Scope } from "./scopes.js";

export interface SnapshotOptions {
  readonly piiKey: Buffer;
  readonly piiMode?: PiiMode;
  /** The field that identifies each walked resource's items (api-shapes: configurable). */
  readonly idFields?: Partial<Record<WalkedResource, string>>;
  /** Commit a group of pages when this many pages or this much time has gone into it. */
  readonly commitEveryPages?: number;
  readonly commitEveryMs?: number;
  readonly now?: () => Date;
}

export interface DeletePolicy {
  /** Fail the run when deletes in a resource exceed both this share of its scope... */
  readonly maxDeleteShare: number;
  /** ...and this many records. */
  readonly maxDeleteCount: number;
  /** Delete after this many consecutive complete absences (1 = at the first). */
  readonly absenceRuns: number;
  /** Let the run delete past the guard (`--allow-deletes`). */
  readonly allowDeletes: boolean;
}

export const defaultDeletePolicy: DeletePolicy = { maxDeleteShare: 0.1, maxDeleteCount: 50, absenceRuns: 1, allowDeletes: false };

export interface ScopeState {
  readonly cursor: string | undefined;
  readonly complete: boolean;
  readonly pages: number;
  readonly records: number;
}

interface Stmts {
  current: Statement;
  currentMany: Statement;
  childrenOfOne: Statement;
  countChildren: Statement;
  data: Statement;
  setFp: Statement;
  insert: Statement;
  close: Statement;
  childrenOf: Statement;
}

/** The run a SnapshotStore is applying pages for. */
export interface ActiveRun {
  readonly runId: number;
  readonly resumedFrom: number | undefined;
  readonly dryRun: boolean;
  readonly counts: Map<StoredResource, ResourceCounts>;
  readonly scopes: Map<string, Scope>;
  /** Items quarantined so far per scope (a resumed walk's included): such a scope is never complete. */
  readonly quarantinedByScope: Map<string, number>;
  /** Resources with no current record when the run's chain began: no delete can be proven. */
  readonly fresh: ReadonlySet<StoredResource>;
  /** Fresh resources in the first run of a chain: empty, so no record needs looking up. */
  readonly empty: ReadonlySet<StoredResource>;
}

/**
 * The snapshot: applies walked pages as versions, proves deletes from complete scopes, and keeps
 * the run log. Every page's changes commit with the walk's checkpoint in the same transaction
 * (pages are grouped so that commits do not dominate), so a crash at any moment leaves a
 * consistent file that the next run resumes from.
 */
export class SnapshotStore {
  readonly db: Database;
  private readonly opts: Required<Omit<SnapshotOptions, "idFields">> & { idFields: Partial<Record<WalkedResource, string>> };
  private readonly stmts = new Map<StoredResource, Stmts>();
  private inTx = false;
  private txPages = 0;
  private txStarted = 0;
  private run: ActiveRun | undefined;
  private readonly seenBatch: Statement;
  private readonly seenPage: Statement;
  private readonly pageUpsert: Statement;
  private readonly pageGet: Statement;
  private readonly pageTouch: Statement;
  /** Validation, fingerprints and canonical JSON: the part of a page's work that needs no database. */
  readonly encoder: Encoder;
  private readonly walkUpsert: Statement;
  private readonly quarantineStmt: Statement;
  private readonly countsUpsert: Statement;

  constructor(db: Database, opts: SnapshotOptions) {
    this.db = db;
    this.opts = {
      piiKey: opts.piiKey,
      piiMode: opts.piiMode ?? "token",
      idFields: opts.idFields ?? {},
      commitEveryPages: opts.commitEveryPages ?? 32,
      commitEveryMs: opts.commitEveryMs ?? 500,
      now: opts.now ?? (() => new Date()),
    };
    this.encoder = new Encoder({ piiKey: this.opts.piiKey, piiMode: this.opts.piiMode, idFields: this.opts.idFields });
    for (const r of StoredResources) {
      const t = `_${r}_v`;
      this.stmts.set(r, {
        current: db.prepare(`SELECT vid FROM ${t} WHERE id = ? AND valid_to_run IS NULL`),
        insert: db.prepare(
          `INSERT INTO ${t} (id, valid_from_run, op, part, changed_fields, fp, hash, data) VALUES (?, ?, ?, ?, ?, ?, ?, ?)`,
        ),
        close: db.prepare(`UPDATE ${t} SET valid_to_run = ?, ended_by = ? WHERE vid = ?`),
        // Answered from the covering index of current versions: no table row is read.
        currentMany: db.prepare(
          `SELECT id, vid, fp FROM ${t} WHERE id IN (SELECT value FROM json_each(?)) AND valid_to_run IS NULL`,
        ),
        data: db.prepare(`SELECT data FROM ${t} WHERE vid = ?`).pluck(),
        setFp: db.prepare(`UPDATE ${t} SET fp = ? WHERE vid = ?`),
        childrenOf: db.prepare(
          `SELECT vid, id, part, data FROM ${t} WHERE part IN (SELECT value FROM json_each(?)) AND valid_to_run IS NULL`,
        ),
        childrenOfOne: db.prepare(`SELECT vid FROM ${t} WHERE part = ? AND valid_to_run IS NULL`),
        countChildren: db.prepare(`SELECT COUNT(*) FROM ${t} WHERE part IN (SELECT value FROM json_each(?)) AND valid_to_run IS NULL`).pluck(),
      });
    }
    this.seenBatch = db.prepare("INSERT OR IGNORE INTO _seen (resource, id) SELECT ?, value FROM json_each(?) RETURNING id").pluck();
    this.seenPage = db.prepare("INSERT INTO _seen_pages (resource, ids) VALUES (?, ?)");
    this.pageUpsert = db.prepare("INSERT OR REPLACE INTO _pages (scope, cursor, fp, next, ids, run_id) VALUES (?, ?, ?, ?, ?, ?)");
    this.pageTouch = db.prepare("UPDATE _pages SET run_id = ? WHERE scope = ? AND cursor = ?");
    this.pageGet = db.prepare("SELECT fp, ids FROM _pages WHERE scope = ? AND cursor = ?");
    this.walkUpsert = db.prepare(
      `INSERT INTO _walk (run_id, scope, resource, filters, cursor, pages, records, complete, quarantined)
       VALUES (@run_id, @scope, @resource, @filters, @cursor, @pages, @records, @complete, @quarantined)
       ON CONFLICT (run_id, scope) DO UPDATE SET cursor = excluded.cursor, pages = pages + excluded.pages,
         records = records + excluded.records, complete = excluded.complete, quarantined = quarantined + excluded.quarantined`,
    );
    this.quarantineStmt = db.prepare(
      "INSERT INTO _quarantine (run_id, resource, scope, id, reason, excerpt, observed_at) VALUES (?, ?, ?, ?, ?, ?, ?)",
    );
    this.countsUpsert = db.prepare(
      `INSERT INTO _run_counts (run_id, resource, seen, inserted, updated, deleted, unchanged, quarantined)
       VALUES (@run_id, @resource, @seen, @inserted, @updated, @deleted, @unchanged, @quarantined)
       ON CONFLICT (run_id, resource) DO UPDATE SET seen = excluded.seen, inserted = excluded.inserted,
         updated = excluded.updated, deleted = excluded.deleted, unchanged = excluded.unchanged, quarantined = excluded.quarantined`,
    );
  }

  private now(): string {
    return this.opts.now().toISOString();
  }

  /**
   * Start a run. Runs whose process died are marked failed first; when the latest run failed
   * with the same options, the new run resumes its walk (its checkpoints and seen ids), so the
   * work is finished without recording a change twice. A dry run applies nothing: everything
   * happens in one transaction that {@link finishRun} rolls back.
   */
  startRun(job: string, options: Record<string, unknown>, flags: { dryRun?: boolean; resume?: boolean } = {}): ActiveRun {
    if (this.run) throw new Error(`run ${this.run.runId} is still active on this store`);
    const now = this.now();
    const optionsJson = canonicalJson(options);
    let resumedFrom: number | undefined;
    const live = liveRun(this.db);
    if (live) {
      throw new Error(`run ${live.run_id} (pid ${live.pid} on ${live.host}) is still running on this snapshot; wait for it to finish`);
    }
    const id = flags.dryRun
      ? this.startDryRun(job, now, optionsJson)
      : this.db.transaction(() => {
          markDeadRuns(this.db, now);
          const last = this.db.prepare("SELECT * FROM _runs ORDER BY run_id DESC LIMIT 1").get() as RunRow | undefined;
          const resumable =
            flags.resume !== false &&
            last !== undefined &&
            last.status === "failed" &&
            last.options === optionsJson &&
            !(last.error ?? "").startsWith("DELETE_GUARD") &&
            this.db.prepare("SELECT 1 FROM _walk WHERE run_id = ? LIMIT 1").get(last.run_id) !== undefined;
          if (resumable) resumedFrom = last.run_id;
          const fresh = resumable ? (JSON.parse(last.fresh) as StoredResource[]) : this.emptyResources();
          const info = this.db
            .prepare("INSERT INTO _runs (job, status, started_at, options, resumed_from, pid, host, fresh) VALUES (?, 'running', ?, ?, ?, ?, ?, ?)")
            .run(job, now, optionsJson, resumedFrom ?? null, process.pid, hostname(), JSON.stringify(fresh));
          const newId = Number(info.lastInsertRowid);
          if (resumedFrom !== undefined) {
            this.db
              .prepare(
                `INSERT INTO _walk (run_id, scope, resource, filters, cursor, pages, records, complete, quarantined)
                 SELECT ?, scope, resource, filters, cursor, 0, 0, complete, quarantined FROM _walk WHERE run_id = ?`,
              )
              .run(newId, resumedFrom);
          } else {
            // Seen ids of an abandoned walk prove nothing for this one.
            this.clearSeen();
          }
          return newId;
        })();
    const fresh = new Set(JSON.parse(this.db.prepare("SELECT fresh FROM _runs WHERE run_id = ?").pluck().get(id) as string) as StoredResource[]);
    this.run = {
      runId: id,
      resumedFrom,
      dryRun: flags.dryRun ?? false,
      counts: new Map(),
      scopes: new Map(),
      quarantinedByScope: new Map(),
      fresh,
      // A fresh resource in the first run of its chain holds nothing yet: no lookups needed.
      empty: resumedFrom === undefined ? fresh : new Set(),
    };
    for (const r of StoredResources) this.run.counts.set(r, emptyCounts());
    return this.run;
  }

  private startDryRun(job: string, now: string, optionsJson: string): number {
    this.db.exec("BEGIN");
    this.inTx = true;
    markDeadRuns(this.db, now);
    this.clearSeen();
    const info = this.db
      .prepare("INSERT INTO _runs (job, status, started_at, options, pid, host, fresh) VALUES (?, 'running', ?, ?, ?, ?, ?)")
      .run(job, now, optionsJson, process.pid, hostname(), JSON.stringify(this.emptyResources()));
    return Number(info.lastInsertRowid);
  }

  /** The resources that hold no current record. */
  private emptyResources(): StoredResource[] {
    return StoredResources.filter((r) => this.db.prepare(`SELECT 1 FROM _${r}_v WHERE valid_to_run IS NULL LIMIT 1`).get() === undefined);
  }

  private clearSeen(): void {
    this.db.exec("DELETE FROM _seen; DELETE FROM _seen_pages;");
  }

  private active(): ActiveRun {
    if (!this.run) throw new Error("no active run: call startRun first");
    return this.run;
  }

  /** The current groups, parsed: a resumed groups walk saw only part of the list. */
  currentGroups(): unknown[] {
    return (this.db.prepare("SELECT data FROM groups").pluck().all() as string[]).map((d) => JSON.parse(d) as unknown);
  }

  /** Register a scope the run walks, and get where a resumed walk left it. */
  beginScope(scope: Scope): ScopeState {
    const run = this.active();
    run.scopes.set(scope.key, scope);
    const row = this.db.prepare("SELECT cursor, complete, pages, records, quarantined FROM _walk WHERE run_id = ? AND scope = ?").get(run.runId, scope.key) as
      | { cursor: string | null; complete: number; pages: number; records: number; quarantined: number }
      | undefined;
    run.quarantinedByScope.set(scope.key, row?.quarantined ?? 0);
    if (!row) {
      this.tx(() => this.walkUpsert.run(walkRow(run.runId, scope, undefined, 0, 0, false, 0)));
      return { cursor: undefined, complete: false, pages: 0, records: 0 };
    }
    return { cursor: row.cursor ?? undefined, complete: row.complete === 1, pages: row.pages, records: row.records };
  }

  /** Prepare and apply a page in one go (pages prepared elsewhere go to {@link applyPrepared}). */
  applyPage(scope: Scope, items: readonly unknown[], next: string | undefined, end: boolean, raw?: readonly string[]): void {
    const run = this.active();
    this.applyPrepared(scope, this.encoder.prepare(scope.resource, items, raw, run.empty.has(scope.resource)), next, end);
  }

  /**
   * Apply one prepared page of a scope's walk, with its checkpoint, in the current group of pages.
   * `next` is the cursor to resume from; `end` says the scope's walk is complete after this page.
   *
   * This is the hot path of every run. Each record's fingerprint (a keyed hash of the text the
   * server sent) is compared with the current version's through a covering index: an unchanged
   * record costs one index probe and is never parsed into canonical JSON again. Only a record
   * whose fingerprint differs is canonicalised and compared field by field (a server that
   * reorders keys changes the fingerprint, not the record). Current versions, seen ids and
   * children are read with one statement per page rather than one per record.
   */
  applyPrepared(scope: Scope, page: PreparedPage, next: string | undefined, end: boolean, pageFp?: { startAfter: string | undefined; fp: number }): void {
    const run = this.active();
    this.ensureTx();
    const childSpec = ChildOf[scope.resource];
    const observedAt = this.now();
    for (const p of page.problems) this.quarantine(scope, p, observedAt);
    let quarantined = page.problems.length;
    const ids = JSON.stringify(page.records.map((r) => r.id));
    let records = page.records;
    if (scope.resource === "members") {
      // A member listed under two groups is seen twice in one walk: only the first sighting counts.
      const firstSeen = new Set(this.seenBatch.all(scope.resource, ids) as string[]);
      records = records.filter((r) => firstSeen.delete(r.id));
    } else if (!run.fresh.has(scope.resource) && records.length > 0) {
      this.seenPage.run(scope.resource, ids);
    }
    this.counts(scope.resource).seen += records.length;
    const { reread, problems } = this.upsertMany(scope, records);
    for (const p of problems) this.quarantine(scope, p, observedAt);
    quarantined += problems.length;
    if (childSpec) {
      // Children of a parent whose fingerprint held are unchanged with it.
      const childCounts = this.counts(childSpec.child);
      const rereadIds = new Set(reread.map((r) => r.id));
      const held = records.filter((r) => !rereadIds.has(r.id));
      let unchangedChildren = 0;
      for (const r of held) if (r.childCount >= 0) unchangedChildren += r.childCount;
      const uncounted = held.filter((r) => r.childCount < 0).map((r) => r.id);
      // Children not read on this thread: their stored count is their count (they did not change).
      if (uncounted.length > 0) unchangedChildren += this.stmt(childSpec.child).countChildren.get(JSON.stringify(uncounted)) as number;
      childCounts.seen += unchangedChildren;
      childCounts.unchanged += unchangedChildren;
      this.observeChildren(scope, reread);
    }
    const scopeQuarantined = (run.quarantinedByScope.get(scope.key) ?? 0) + quarantined;
    run.quarantinedByScope.set(scope.key, scopeQuarantined);
    // A page stored whole can be recognised by its text next time.
    if (pageFp && quarantined === 0 && page.records.length > 0) {
      this.pageUpsert.run(scope.key, pageFp.startAfter ?? "", pageFp.fp, next ?? null, JSON.stringify(page.records.map((r) => r.id)), run.runId);
    }
    this.walkUpsert.run(walkRow(run.runId, scope, next, 1, page.records.length + quarantined, end && scopeQuarantined === 0, quarantined));
    this.pageDone();
  }

  /**
   * Apply a page the walk recognised by its text (see {@link knownPages}): its records are the
   * stored ones, unchanged. Only the walk's bookkeeping happens: seen ids, counts, checkpoint.
   */
  applyKnownPage(scope: Scope, startAfter: string | undefined, fp: number, next: string | undefined, end: boolean): void {
    const run = this.active();
    this.ensureTx();
    const row = this.pageGet.get(scope.key, startAfter ?? "") as { fp: number; ids: string } | undefined;
    if (!row || row.fp !== fp) throw new Error(`page ${scope.key} after ${startAfter ?? "(start)"} is not the one this snapshot knows`);
    this.pageTouch.run(run.runId, scope.key, startAfter ?? "");
    let ids = JSON.parse(row.ids) as string[];
    if (scope.resource === "members") ids = this.seenBatch.all(scope.resource, row.ids) as string[];
    else if (!run.fresh.has(scope.resource)) this.seenPage.run(scope.resource, row.ids);
    const counts = this.counts(scope.resource);
    counts.seen += ids.length;
    counts.unchanged += ids.length;
    const childSpec = ChildOf[scope.resource];
    if (childSpec && ids.length > 0) {
      const n = this.stmt(childSpec.child).countChildren.get(JSON.stringify(ids)) as number;
      const childCounts = this.counts(childSpec.child);
      childCounts.seen += n;
      childCounts.unchanged += n;
    }
    const scopeQuarantined = run.quarantinedByScope.get(scope.key) ?? 0;
    this.walkUpsert.run(walkRow(run.runId, scope, next, 1, ids.length, end && scopeQuarantined === 0, 0));
    this.pageDone();
  }

  /** The first run of the chain of resumed runs that the active run finishes. */
  private chainStart(run: ActiveRun): number {
    let first = run.runId;
    let prev = run.resumedFrom ?? null;
    while (prev !== null) {
      first = prev;
      prev = (this.db.prepare("SELECT resumed_from FROM _runs WHERE run_id = ?").pluck().get(prev) as number | null | undefined) ?? null;
    }
    return first;
  }

  /** The pages the last walks stored whole: `[scope, cursor ('' for the first page), fp, next]`. */
  knownPages(): [string, string, number, string | null][] {
    return this.db.prepare("SELECT scope, cursor, fp, next FROM _pages").raw().all() as [string, string, number, string | null][];
  }

  /**
   * Insert, update or leave each record. Returns the records whose fingerprint did not match the
   * current version's (new, changed, or only re-serialised): their children need a look.
   */
  private upsertMany(scope: Scope, records: readonly PreparedRecord[]): { reread: PreparedRecord[]; problems: Problem[] } {
    const resource = scope.resource;
    const problems: Problem[] = [];
    const reread: PreparedRecord[] = [];
    if (records.length === 0) return { reread, problems };
    const s = this.stmt(resource);
    const run = this.active();
    const counts = this.counts(resource);
    // A record prepared lazily (id and text only) is parsed and encoded now that it needs a look.
    const materialize = (r: PreparedRecord): PreparedRecord | undefined => {
      const m = this.encoder.materialize(resource, r);
      problems.push(...m.problems);
      return m.record;
    };
    if (run.empty.has(resource)) {
      // Nothing was stored before this run and each record arrives once: every one is an insert.
      for (const r of records) {
        const rec = materialize(r);
        if (!rec) continue;
        s.insert.run(rec.id, run.runId, "insert", rec.part, null, rec.fp, rec.hash, rec.canonical);
        counts.inserted++;
        reread.push(rec);
      }
      return { reread, problems };
    }
    const current = new Map<string, { vid: number; fp: number | null }>();
    for (const row of s.currentMany.all(JSON.stringify(records.map((r) => r.id))) as { id: string; vid: number; fp: number | null }[]) {
      current.set(row.id, row);
    }
    for (const r of records) {
      const cur = current.get(r.id);
      if (cur && r.fp !== null && cur.fp === r.fp) {
        counts.unchanged++;
        continue;
      }
      const rec = materialize(r);
      if (!rec) continue;
      reread.push(rec);
      const data = cur ? (s.data.get(cur.vid) as string) : undefined;
      this.applyVersion(resource, rec.id, rec.part, rec.fp, { canonical: rec.canonical!, hash: rec.hash! }, cur && data !== undefined ? { vid: cur.vid, data } : undefined);
    }
    return { reread, problems };
  }

  /** Record one observation against the current version (if any): insert, update, or unchanged. */
  private applyVersion(
    resource: StoredResource,
    id: string,
    part: string | null,
    fp: number | null,
    { canonical, hash }: { canonical: string; hash: string },
    cur: { vid: number; data: string } | undefined,
  ): void {
    const s = this.stmt(resource);
    const runId = this.active().runId;
    const counts = this.counts(resource);
    if (!cur) {
      s.insert.run(id, runId, "insert", part, null, fp, hash, canonical);
      counts.inserted++;
      return;
    }
    const fields = cur.data === canonical ? [] : changedFields(JSON.parse(cur.data), JSON.parse(canonical));
    if (fields.length === 0) {
      // The same record (or only null-versus-missing differs, tolerance rule 2): keep the version,
      // remember the new fingerprint so the next walk takes the fast path.
      s.setFp.run(fp, cur.vid);
      counts.unchanged++;
      return;
    }
    s.close.run(runId, "update", cur.vid);
    s.insert.run(id, runId, "update", part, JSON.stringify(fields), fp, hash, canonical);
    counts.updated++;
  }

  /**
   * Children of re-read parents: each parent's list is the whole truth about its children (unless
   * part of it was unreadable, which `prepare` quarantined and marked with a null fingerprint).
   */
  private observeChildren(scope: Scope, parents: readonly PreparedRecord[]): void {
    if (parents.length === 0) return;
    const spec = ChildOf[scope.resource]!;
    const counts = this.counts(spec.child);
    const s = this.stmt(spec.child);
    const run = this.active();
    const seen: { id: string; parent: string; canonical: string; hash: string }[] = [];
    const keepByParent = new Map<string, Set<string> | null>();
    for (const p of parents) {
      // Materialized parents carry their children; `prepare` encoded them for the others.
      const children = p.children ?? [];
      for (const c of children) seen.push({ id: c.id, parent: p.id, canonical: c.canonical, hash: c.hash });
      keepByParent.set(p.id, p.fp === null ? null : new Set(children.map((c) => c.id)));
    }
    counts.seen += seen.length;
    if (run.empty.has(spec.child)) {
      for (const c of seen) s.insert.run(c.id, run.runId, "insert", c.parent, null, null, c.hash, c.canonical);
      counts.inserted += seen.length;
      return;
    }
    const existing = s.childrenOf.all(JSON.stringify(parents.map((p) => p.id))) as { vid: number; id: string; part: string; data: string }[];
    const byId = new Map(existing.map((row) => [row.id, row]));
    // A child that moved from another parent is found by its own id.
    const moved = seen.filter((c) => !byId.has(c.id));
    if (moved.length > 0) {
      for (const row of s.currentMany.all(JSON.stringify(moved.map((c) => c.id))) as { id: string; vid: number }[]) {
        byId.set(row.id, { vid: row.vid, id: row.id, part: "", data: s.data.get(row.vid) as string });
      }
    }
    for (const c of seen) this.applyVersion(spec.child, c.id, c.parent, null, c, byId.get(c.id));
    for (const row of existing) {
      const keep = keepByParent.get(row.part);
      if (keep && !keep.has(row.id)) {
        s.close.run(run.runId, "delete", row.vid);
        counts.deleted++;
      }
    }
  }

  private quarantine(scope: Scope, p: Problem, observedAt: string): void {
    const run = this.active();
    this.quarantineStmt.run(run.runId, scope.resource, scope.key, p.id, p.reason, p.excerpt, observedAt);
    this.counts(scope.resource).quarantined++;
  }


  private stmt(r: StoredResource): Stmts {
    return this.stmts.get(r)!;
  }

  private counts(r: StoredResource): ResourceCounts {
    return this.active().counts.get(r)!;
  }

  private ensureTx(): void {
    if (this.inTx) return;
    this.db.exec("BEGIN");
    this.inTx = true;
    this.txPages = 0;
    this.txStarted = Date.now();
  }

  private pageDone(): void {
    this.txPages++;
    const run = this.active();
    if (run.dryRun) return;
    if (this.txPages >= this.opts.commitEveryPages || Date.now() - this.txStarted >= this.opts.commitEveryMs) this.commit();
  }

  /** Commit the group of pages in progress (with the run's counts). */
  commit(): void {
    const run = this.active();
    if (!this.inTx || run.dryRun) return;
    this.writeCounts();
    this.db.exec("COMMIT");
    this.inTx = false;
  }

  private writeCounts(): void {
    const run = this.active();
    for (const [resource, c] of run.counts) {
      if (Object.values(c).some((n) => n > 0)) this.countsUpsert.run({ run_id: run.runId, resource, ...c });
    }
  }

  private tx(fn: () => void): void {
    if (this.inTx) fn();
    else this.db.transaction(fn)();
  }

  /**
   * End the run. When `failure` is given, or any scope is incomplete while the run claims success,
   * nothing is deleted. Otherwise deletes are proven scope by scope, checked against the guard
   * (a violation fails the run and reverts what it applied), applied, and the run is marked
   * succeeded in a commit that is fsynced (`synchronous=FULL`) before any sink reads it.
   */
  finishRun(policy: DeletePolicy, failure?: { code?: string; message: string }): RunOutcome {
    const run = this.active();
    try {
      this.beginFinal(run);
      if (failure) return this.endFailed(run, { code: failure.code ?? "ERROR", message: failure.message }, false);
      const plan = planDeletes(this.db, run, policy);
      const blocked = plan.filter((p) => p.blocked);
      if (blocked.length > 0 && !policy.allowDeletes) {
        const detail = blocked
          .map((p) => `${p.resource}: ${p.ids.length} of ${p.scopeSize} (${((p.ids.length / Math.max(1, p.scopeSize)) * 100).toFixed(1)}%)`)
          .join("; ");
        const message =
          `the run would delete ${detail}, over the guard of ${(policy.maxDeleteShare * 100).toFixed(0)}% and ${policy.maxDeleteCount} records. ` +
          "Nothing was applied. If these records really are gone, run again with --allow-deletes";
        return this.endFailed(run, { code: new DeleteGuardError(message).code, message }, true);
      }
      for (const p of plan) this.applyDeletes(run, p.resource, p.ids);
      if (this.db.prepare("SELECT 1 FROM _absence LIMIT 1").get()) {
        for (const r of new Set([...run.scopes.values()].map((x) => x.resource))) {
          this.db.prepare(`DELETE FROM _absence WHERE resource = ? AND id IN (${seenIdsSql(r)})`).run(r, r);
        }
      }
      this.clearSeen();
      // Keep only the pages of this walk (its resumed runs' included): an older page describes
      // records as they were then, and could be mistaken for the current ones.
      this.db.prepare("DELETE FROM _pages WHERE run_id < ?").run(this.chainStart(run));
      this.db.prepare("UPDATE _runs SET status = 'succeeded', finished_at = ? WHERE run_id = ?").run(this.now(), run.runId);
      this.writeCounts();
      if (run.dryRun) return this.rollbackDryRun(run, "succeeded");
      this.durableCommit();
      this.db.pragma("incremental_vacuum");
      return { runId: run.runId, status: "succeeded", counts: countsObject(run), resumedFrom: run.resumedFrom };
    } finally {
      this.run = undefined;
    }
  }

  /**
   * Open the transaction that ends the run. The walk's pending group of pages is committed first:
   * SQLite cannot change `synchronous` inside a transaction, and the final commit must be FULL.
   */
  private beginFinal(run: ActiveRun): void {
    if (run.dryRun) return;
    this.commit();
    this.db.pragma("synchronous = FULL");
    this.db.exec("BEGIN");
    this.inTx = true;
  }

  private durableCommit(): void {
    try {
      this.db.exec("COMMIT");
    } finally {
      this.inTx = false;
      this.db.pragma("synchronous = NORMAL");
    }
  }

  private rollbackDryRun(run: ActiveRun, status: "succeeded" | "failed", failure?: RunFailure): RunOutcome {
    this.db.exec("ROLLBACK");
    this.inTx = false;
    return { runId: run.runId, status, counts: countsObject(run), resumedFrom: undefined, dryRun: true, ...(failure ? { failure } : {}) };
  }

  private endFailed(run: ActiveRun, failure: RunFailure, revert: boolean): RunOutcome {
    if (run.dryRun) return this.rollbackDryRun(run, "failed", failure);
    if (revert) {
      for (const r of StoredResources) {
        this.db.prepare(`DELETE FROM _${r}_v WHERE valid_from_run = ?`).run(run.runId);
        this.db.prepare(`UPDATE _${r}_v SET valid_to_run = NULL, ended_by = NULL WHERE valid_to_run = ?`).run(run.runId);
      }
      this.db.prepare("DELETE FROM _walk WHERE run_id = ?").run(run.runId);
      // The pages this run stored may describe versions that are gone now.
      this.db.exec("DELETE FROM _pages");
      this.clearSeen();
      for (const c of run.counts.values()) Object.assign(c, { inserted: 0, updated: 0, deleted: 0 });
    }
    this.writeCounts();
    this.db
      .prepare("UPDATE _runs SET status = 'failed', finished_at = ?, error = ? WHERE run_id = ?")
      .run(this.now(), `${failure.code}: ${failure.message}`, run.runId);
    this.durableCommit();
    return { runId: run.runId, status: "failed", counts: countsObject(run), resumedFrom: run.resumedFrom, failure };
  }

  private applyDeletes(run: ActiveRun, resource: WalkedResource, ids: readonly string[]): void {
    const s = this.stmt(resource);
    const child = ChildOf[resource];
    const clearAbsence = this.db.prepare("DELETE FROM _absence WHERE resource = ? AND id = ?");
    for (const id of ids) {
      const cur = s.current.get(id) as { vid: number } | undefined;
      if (!cur) continue;
      s.close.run(run.runId, "delete", cur.vid);
      this.counts(resource).deleted++;
      clearAbsence.run(resource, id);
      if (child) {
        const cs = this.stmt(child.child);
        for (const row of cs.childrenOfOne.all(id) as { vid: number }[]) {
          cs.close.run(run.runId, "delete", row.vid);
          this.counts(child.child).deleted++;
        }
      }
    }
  }
}

export interface RunFailure {
  readonly code: string;
  readonly message: string;
}

export interface RunOutcome {
  readonly runId: number;
  readonly status: "succeeded" | "failed";
  readonly counts: Record<StoredResource, ResourceCounts>;
  readonly resumedFrom: number | undefined;
  /** Why the run failed (the run log keeps it as `CODE: message`). */
  readonly failure?: RunFailure;
  readonly dryRun?: boolean;
}

function walkRow(runId: number, scope: Scope, cursor: string | undefined, pages: number, records: number, complete: boolean, quarantined: number) {
  return {
    run_id: runId,
    scope: scope.key,
    resource: scope.resource,
    filters: JSON.stringify(scope.filters),
    cursor: cursor ?? null,
    pages,
    records,
    complete: complete ? 1 : 0,
    quarantined,
  };
}

function countsObject(run: ActiveRun): Record<StoredResource, ResourceCounts> {
  return Object.fromEntries([...run.counts].map(([k, v]) => [k, { ...v }])) as Record<StoredResource, ResourceCounts>;
}

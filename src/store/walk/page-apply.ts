/**
 * Applying one walked page to the snapshot: the hot path of every run.
 *
 * Each record's fingerprint (a keyed hash of the text the server sent) is compared with the
 * current version's through a covering index: an unchanged record costs one index probe and is
 * never parsed again. Only a record whose fingerprint differs is canonicalised and compared field
 * by field (a server that reorders keys changes the fingerprint, not the record). Current
 * versions, seen ids and children are read with one statement per page, not one per record.
 *
 * Children (plans, coverages) are the parent's list: a child the list no longer has is not closed
 * here but noted in `_child_gone`, and deleted when the walk succeeds, after the delete guard.
 * A child that moved to another parent in the same walk is then an update, never a delete.
 */
import type { Database, Statement } from "better-sqlite3";
import { redact } from "../../errors.js";
import type { ResourceCounts } from "../runs/counts.js";
import { changedFields } from "./field-diff.js";
import { recordNewFields } from "./new-fields.js";
import type { Encoder, PreparedPage, PreparedRecord, Problem } from "./prepare-page.js";
import { ChildOf, type StoredResource } from "../schema/resources.js";
import type { ActiveRun } from "../runs/run-state.js";
import type { Scope } from "./scopes.js";
import type { Checkpoints } from "../runs/checkpoints.js";
import type { PageCache } from "./page-cache.js";
import type { PageGroups } from "./transactions.js";
import type { SeenIds } from "./seen-ids.js";
import type { VersionStatements } from "./versions.js";

export interface PageApplyDeps {
  readonly db: Database;
  readonly versions: Map<StoredResource, VersionStatements>;
  readonly encoder: Encoder;
  readonly seen: SeenIds;
  readonly pages: PageCache;
  readonly groups: PageGroups;
  readonly checkpoints: Checkpoints;
  readonly now: () => string;
}

export class PageApplier {
  private readonly quarantineStmt: Statement;
  private readonly childGone: Statement;

  constructor(private readonly d: PageApplyDeps) {
    this.quarantineStmt = d.db.prepare(
      "INSERT INTO _quarantine (run_id, resource, scope, id, reason, excerpt, observed_at) VALUES (?, ?, ?, ?, ?, ?, ?)",
    );
    this.childGone = d.db.prepare("INSERT OR IGNORE INTO _child_gone (resource, vid, scope) VALUES (?, ?, ?)");
  }

  /**
   * Apply one prepared page of a scope's walk, with its checkpoint, in the current group of pages.
   * `next` is the cursor to resume from; `end` says the scope's walk is complete after this page.
   */
  apply(run: ActiveRun, scope: Scope, page: PreparedPage, next: string | undefined, end: boolean, pageFp?: { startAfter: string | undefined; fp: number }): void {
    const { seen } = this.d;
    const childSpec = ChildOf[scope.resource];
    const observedAt = this.d.now();
    for (const p of page.problems) this.quarantine(run, scope, p, observedAt);
    let quarantined = page.problems.length;
    const ids = JSON.stringify(page.records.map((r) => r.id));
    let records = page.records;
    let firstSightings = records.length;
    if (scope.resource === "members" && run.walks) {
      // A member listed under two groups is seen twice in one walk: only the first sighting counts,
      // unless the listing is read again to confirm a delete (then the later answer is the newer).
      // (A run of lookups only sees each member once, and leaves the seen ids to the walk.)
      const firstSeen = seen.firstSightings("members", ids);
      firstSightings = firstSeen.size;
      if (scope.filters.confirm === undefined) records = records.filter((r) => firstSeen.delete(r.id));
    } else if (scope.resource !== "members" && !run.fresh.has(scope.resource) && records.length > 0) {
      seen.markPage(scope.resource, ids, run.rewalked.has(scope.key) || scope.filters.confirm !== undefined);
    }
    counts(run, scope.resource).seen += firstSightings;
    const { reread, problems, vids } = this.upsertMany(run, scope, records);
    for (const p of problems) this.quarantine(run, scope, p, observedAt);
    quarantined += problems.length;
    recordNewFields(this.d.db, run.runId, observedAt, [...(page.newFields ?? []), ...this.d.encoder.fields.drain()]);
    let children = 0;
    if (childSpec) {
      // Children of a parent whose fingerprint held are unchanged with it.
      const childCounts = counts(run, childSpec.child);
      const rereadIds = new Set(reread.map((r) => r.id));
      const held = records.filter((r) => !rereadIds.has(r.id));
      let unchangedChildren = 0;
      for (const r of held) if (r.childCount >= 0) unchangedChildren += r.childCount;
      const uncounted = held.filter((r) => r.childCount < 0).map((r) => r.id);
      // Children not read on this thread: their stored count is their count (they did not change).
      if (uncounted.length > 0) unchangedChildren += this.stmt(childSpec.child).countChildren.get(JSON.stringify(uncounted)) as number;
      childCounts.seen += unchangedChildren;
      childCounts.unchanged += unchangedChildren;
      children = unchangedChildren + this.observeChildren(run, scope, reread);
    }
    const scopeQuarantined = (run.quarantinedByScope.get(scope.key) ?? 0) + quarantined;
    run.quarantinedByScope.set(scope.key, scopeQuarantined);
    // A page whose every record is the version the snapshot holds can be recognised by its bytes
    // next time: each applied from it, or (a member seen first on another group's page) with the
    // text of the version applied from there, checked as the run ends (PageCache.settle).
    const second = pageFp && quarantined === 0 && page.records.length > 0 && vids.length === records.length ? secondSightings(page.records, records) : undefined;
    if (pageFp && second) this.d.pages.remember(scope.key, pageFp.startAfter, pageFp.fp, next, page.records.map((r) => r.id), vids, run.runId, second);
    this.d.checkpoints.advance(run.runId, scope, {
      next,
      records: page.records.length + quarantined,
      children,
      complete: end && scopeQuarantined === 0,
      quarantined,
    });
  }

  /**
   * Apply a page the walk recognised by its bytes (see PageCache): its records are the stored
   * ones, unchanged. Only the walk's bookkeeping happens: seen ids, counts, checkpoint.
   */
  applyKnown(run: ActiveRun, scope: Scope, startAfter: string | undefined, fp: number, next: string | undefined, end: boolean): void {
    const idsJson = this.d.pages.recognise(scope.key, startAfter, fp);
    let ids = JSON.parse(idsJson) as string[];
    const all = ids.length;
    if (scope.resource === "members") ids = [...this.d.seen.firstSightings("members", idsJson)];
    else if (!run.fresh.has(scope.resource)) this.d.seen.markPage(scope.resource, idsJson, run.rewalked.has(scope.key), true);
    const c = counts(run, scope.resource);
    c.seen += ids.length;
    c.unchanged += ids.length;
    const childSpec = ChildOf[scope.resource];
    let children = 0;
    if (childSpec && ids.length > 0) {
      children = this.stmt(childSpec.child).countChildren.get(JSON.stringify(ids)) as number;
      const childCounts = counts(run, childSpec.child);
      childCounts.seen += children;
      childCounts.unchanged += children;
    }
    const scopeQuarantined = run.quarantinedByScope.get(scope.key) ?? 0;
    this.d.checkpoints.advance(run.runId, scope, { next, records: all, children, complete: end && scopeQuarantined === 0, quarantined: 0 });
  }

  /**
   * Insert, update or leave each record. Returns the records whose fingerprint did not match the
   * current version's (new, changed, or only re-serialised: their children need a look), and the
   * version id each record is at now (in page order; shorter when a record was quarantined).
   */
  private upsertMany(run: ActiveRun, scope: Scope, records: readonly PreparedRecord[]): { reread: PreparedRecord[]; problems: Problem[]; vids: number[] } {
    const resource = scope.resource;
    const problems: Problem[] = [];
    const reread: PreparedRecord[] = [];
    const vids: number[] = [];
    if (records.length === 0) return { reread, problems, vids };
    const s = this.stmt(resource);
    const c = counts(run, resource);
    // A record prepared lazily (id and text only) is parsed and encoded now that it needs a look.
    const materialize = (r: PreparedRecord): PreparedRecord | undefined => {
      const m = this.d.encoder.materialize(resource, r);
      problems.push(...m.problems);
      return m.record;
    };
    if (run.empty.has(resource)) {
      // Nothing was stored before this run and each record arrives once: every one is an insert.
      for (const r of records) {
        const rec = materialize(r);
        if (!rec) continue;
        vids.push(s.insert(rec.id, run.runId, "insert", rec.part, null, rec.fp, rec.hash!, rec.canonical!));
        c.inserted++;
        reread.push(rec);
      }
      return { reread, problems, vids };
    }
    const current = new Map<string, { vid: number; fp: number | null }>();
    for (const row of s.currentMany.all(JSON.stringify(records.map((r) => r.id))) as { id: string; vid: number; fp: number | null }[]) {
      current.set(row.id, row);
    }
    for (const r of records) {
      const cur = current.get(r.id);
      if (cur && r.fp !== null && cur.fp === r.fp) {
        c.unchanged++;
        vids.push(cur.vid);
        continue;
      }
      const rec = materialize(r);
      if (!rec) continue;
      reread.push(rec);
      const data = cur ? (s.data.get(cur.vid) as string) : undefined;
      vids.push(this.applyVersion(run, resource, rec.id, rec.part, rec.fp, { canonical: rec.canonical!, hash: rec.hash! }, cur && data !== undefined ? { vid: cur.vid, data } : undefined));
    }
    return { reread, problems, vids };
  }

  /** Record one observation against the current version (if any); returns the version id now current. */
  private applyVersion(
    run: ActiveRun,
    resource: StoredResource,
    id: string,
    part: string | null,
    fp: number | null,
    { canonical, hash }: { canonical: string; hash: string },
    cur: { vid: number; data: string } | undefined,
  ): number {
    const s = this.stmt(resource);
    const c = counts(run, resource);
    if (!cur) {
      c.inserted++;
      return s.insert(id, run.runId, "insert", part, null, fp, hash, canonical);
    }
    if (cur.vid > (run.vidsBefore.get(resource) ?? 0)) return this.amend(run, resource, id, part, fp, { canonical, hash }, cur);
    const fields = cur.data === canonical ? [] : changedFields(JSON.parse(cur.data), JSON.parse(canonical));
    if (fields.length === 0) {
      // The same record (or only null-versus-missing differs, tolerance rule 2): keep the version,
      // remember the new fingerprint so the next walk takes the fast path.
      s.setFp.run(fp, cur.vid);
      c.unchanged++;
      return cur.vid;
    }
    s.close.run(run.runId, "update", cur.vid);
    c.updated++;
    return s.insert(id, run.runId, "update", part, JSON.stringify(fields), fp, hash, canonical);
  }

  /**
   * A record seen again in the run that already wrote its current version (it moved, or changed,
   * between two sightings: a coverage to another member, a claim to another group, a member read
   * again to confirm a delete). The version is amended in place, so that the record changes once
   * per run: an insert stays an insert of the newer content; an update is measured against the
   * version before the run again (and vanishes if the record is back to it).
   */
  private amend(
    run: ActiveRun,
    resource: StoredResource,
    id: string,
    part: string | null,
    fp: number | null,
    { canonical, hash }: { canonical: string; hash: string },
    cur: { vid: number; data: string },
  ): number {
    const { db } = this.d;
    if (cur.data === canonical) {
      this.stmt(resource).setFp.run(fp, cur.vid);
      counts(run, resource).unchanged++;
      return cur.vid;
    }
    const before = db
      .prepare(
        `SELECT v.vid, d.data FROM _${resource}_v v JOIN _${resource}_d d ON d.vid = v.vid WHERE v.id = ? AND v.valid_to_run = ? AND v.ended_by = 'update' ORDER BY v.vid DESC LIMIT 1`,
      )
      .get(id, run.runId) as { vid: number; data: string } | undefined;
    const fields = before ? changedFields(JSON.parse(before.data), JSON.parse(canonical)) : null;
    if (before && fields!.length === 0) {
      // Back to the version before the run: no change at all.
      db.prepare(`DELETE FROM _${resource}_v WHERE vid = ?`).run(cur.vid);
      db.prepare(`UPDATE _${resource}_v SET valid_to_run = NULL, ended_by = NULL, fp = ? WHERE vid = ?`).run(fp, before.vid);
      counts(run, resource).updated--;
      counts(run, resource).unchanged++;
      return before.vid;
    }
    db.prepare(`UPDATE _${resource}_v SET part = ?, fp = ?, changed_fields = ? WHERE vid = ?`).run(part, fp, fields ? JSON.stringify(fields) : null, cur.vid);
    db.prepare(`UPDATE _${resource}_d SET hash = ?, data = ? WHERE vid = ?`).run(hash, canonical, cur.vid);
    this.stmt(resource).refreshTyped.run(cur.vid);
    return cur.vid;
  }

  /**
   * Children of re-read parents: each parent's list is the whole truth about its children (unless
   * part of it was unreadable, which `prepare` quarantined and marked with a null fingerprint).
   * Returns how many children the parents listed.
   */
  private observeChildren(run: ActiveRun, scope: Scope, parents: readonly PreparedRecord[]): number {
    if (parents.length === 0) return 0;
    const spec = ChildOf[scope.resource]!;
    const c = counts(run, spec.child);
    const s = this.stmt(spec.child);
    const seen: { id: string; parent: string; canonical: string; hash: string }[] = [];
    const keepByParent = new Map<string, Set<string> | null>();
    for (const p of parents) {
      // Materialized parents carry their children; `prepare` encoded them for the others.
      const children = p.children ?? [];
      for (const ch of children) seen.push({ id: ch.id, parent: p.id, canonical: ch.canonical, hash: ch.hash });
      keepByParent.set(p.id, p.fp === null ? null : new Set(children.map((ch) => ch.id)));
    }
    c.seen += seen.length;
    if (run.empty.has(spec.child)) {
      for (const ch of seen) s.insert(ch.id, run.runId, "insert", ch.parent, null, null, ch.hash, ch.canonical);
      c.inserted += seen.length;
      return seen.length;
    }
    const existing = s.childrenOf.all(JSON.stringify(parents.map((p) => p.id))) as { vid: number; id: string; part: string; data: string }[];
    const byId = new Map(existing.map((row) => [row.id, row]));
    // A child that moved from another parent is found by its own id.
    const moved = seen.filter((ch) => !byId.has(ch.id));
    if (moved.length > 0) {
      for (const row of s.currentMany.all(JSON.stringify(moved.map((ch) => ch.id))) as { id: string; vid: number }[]) {
        byId.set(row.id, { vid: row.vid, id: row.id, part: "", data: s.data.get(row.vid) as string });
      }
    }
    for (const ch of seen) this.applyVersion(run, spec.child, ch.id, ch.parent, null, ch, byId.get(ch.id));
    const listed = new Set(seen.map((ch) => ch.id));
    for (const row of existing) {
      const keep = keepByParent.get(row.part);
      // Moved to another parent on this page: updated above, not gone.
      if (keep && !keep.has(row.id) && !listed.has(row.id)) this.childGone.run(spec.child, row.vid, scope.key);
    }
    return seen.length;
  }

  private quarantine(run: ActiveRun, scope: Scope, p: Problem, observedAt: string): void {
    // The excerpt is masked field by field already; redact() also catches an SSN in free text.
    this.quarantineStmt.run(run.runId, scope.resource, scope.key, p.id, redact(p.reason), redact(p.excerpt), observedAt);
    counts(run, scope.resource).quarantined++;
  }

  private stmt(r: StoredResource): VersionStatements {
    return this.d.versions.get(r)!;
  }
}

function counts(run: ActiveRun, r: StoredResource): ResourceCounts {
  return run.counts.get(r)!;
}

/**
 * A page's second sightings (members listed on another group's page earlier in the walk, not
 * applied from this one) as `[id, fingerprint]`; undefined when one has no fingerprint (its text
 * was never compared with anything: the page is not remembered).
 */
function secondSightings(listed: readonly PreparedRecord[], applied: readonly PreparedRecord[]): [string, number][] | undefined {
  if (listed.length === applied.length) return [];
  const kept = new Set(applied);
  const second: [string, number][] = [];
  for (const r of listed) {
    if (kept.has(r)) continue;
    if (r.fp === null) return undefined;
    second.push([r.id, r.fp]);
  }
  return second;
}

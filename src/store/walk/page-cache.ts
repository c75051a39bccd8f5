/**
 * Pages the walk may recognise by their bytes instead of reading them: the rule for when a page
 * may be trusted.
 *
 * - A page is remembered only when every record on it is the version the snapshot holds: none was
 *   quarantined, and each was applied from that very page or, for a member listed in two groups
 *   and seen first on the other group's page (a second sighting, not applied), has here the text
 *   of the version the snapshot holds when the run ends. That is checked as the run ends, when a
 *   load from empty has its indexes (`settle`); until then the page has no version ids, and a run
 *   that never gets there leaves it to be dropped. A member whose two listings differ leaves the
 *   page forgotten: next time it could be the member's first sighting, and assert a version the
 *   snapshot does not hold. (Before, no page with a second sighting was remembered: at 100k
 *   members, 234 of the walk's member pages were read again on every run.)
 * - It carries the version ids its records had then; a member page is recognised only while every
 *   one of them is still current (a member in two groups can be updated from the other group's
 *   page later in a walk, or refetched by the webhook worker, and the page must not go on
 *   asserting the older version: the next run's `prune` drops it).
 * - It carries the run that read it (`asserted_run`; recognising it later does not change that):
 *   it is recognised only while no record on it and no child of one (a member's coverages, a
 *   group's plans) began or ended a version after that run. A member's coverages can change
 *   through the other group's page, or a record through a failed run's page at another cursor,
 *   while this page's bytes come back as they were; the page would then assert what the snapshot
 *   no longer holds, and, for a member, make the page that would correct it a second sighting.
 * - A failed run's pages are never trusted (they may be part of a cursor cycle, or of a walk that
 *   stopped half-way): they are dropped when the run ends failed (the pages it read and those it
 *   recognised) or is found dead (the pages it read).
 * - Only the last successful walk's pages are kept: an older page describes records as they were.
 *   A page keeps the run that read it (`run_id`); the pages a walk recognises are listed in a
 *   table of the connection's own (`temp._walked_pages`), not written to their rows: a row holds
 *   its ids (2.5 KB on average), and writing each one again made a no-change walk rewrite the
 *   whole cache (16 MB at 100k members) through the WAL.
 * - No two of a resource's pages list one id (a walk that did is forgotten): the ids of a walk
 *   whose every page was recognised are then counted without a scan (see SeenIds).
 */
import type { Database, Statement } from "better-sqlite3";
import { ChildOf, WalkedResources, type WalkedResource } from "../schema/resources.js";

/** One scope's page: `[cursor ('' for the first page), fingerprint, next cursor]` */
export type KnownPage = [string, number, string | null];

export class PageCache {
  private readonly upsert: Statement;
  private readonly get: Statement;
  private readonly walked: Statement;
  private readonly unsettled: Statement;

  constructor(private readonly db: Database) {
    this.upsert = db.prepare("INSERT OR REPLACE INTO _pages (scope, cursor, fp, next, ids, vids, run_id, asserted_run) VALUES (?, ?, ?, ?, ?, ?, ?, ?)");
    this.get = db.prepare("SELECT fp, ids FROM _pages WHERE scope = ? AND cursor = ?");
    // In the page's own transaction, as the page's other writes: a rolled-back page takes it along.
    db.exec("CREATE TEMP TABLE IF NOT EXISTS _walked_pages (scope TEXT NOT NULL, cursor TEXT NOT NULL, PRIMARY KEY (scope, cursor)) WITHOUT ROWID");
    this.walked = db.prepare("INSERT OR IGNORE INTO temp._walked_pages (scope, cursor) VALUES (?, ?)");
    // Pages remembered with second sightings, checked as the run ends: the version ids of the
    // records applied from them, and each second sighting's [id, fingerprint].
    db.exec("CREATE TEMP TABLE IF NOT EXISTS _pages_unsettled (scope TEXT NOT NULL, cursor TEXT NOT NULL, vids TEXT NOT NULL, second TEXT NOT NULL, PRIMARY KEY (scope, cursor)) WITHOUT ROWID");
    this.unsettled = db.prepare("INSERT OR REPLACE INTO temp._pages_unsettled (scope, cursor, vids, second) VALUES (?, ?, ?, ?)");
  }

  /**
   * Remember a page with the version ids of the records applied from it. `second`: its second
   * sightings (`[id, fingerprint]`), which `settle` checks as the run ends.
   */
  remember(scope: string, startAfter: string | undefined, fp: number, next: string | undefined, ids: readonly string[], vids: readonly number[], runId: number, second: readonly (readonly [string, number])[] = []): void {
    const unsettled = second.length > 0;
    this.upsert.run(scope, startAfter ?? "", fp, next ?? null, JSON.stringify(ids), unsettled ? null : JSON.stringify(vids), runId, runId);
    if (unsettled) this.unsettled.run(scope, startAfter ?? "", JSON.stringify(vids), JSON.stringify(second));
  }

  /**
   * As a walk succeeds (after a load's indexes are built): a page remembered with second
   * sightings is kept, with their version ids, when each member's text on it is that of its
   * current version; forgotten otherwise.
   */
  settle(): void {
    const rows = this.db.prepare("SELECT scope, cursor, vids, second FROM temp._pages_unsettled").all() as { scope: string; cursor: string; vids: string; second: string }[];
    const current = this.db.prepare("SELECT id, vid, fp FROM _members_v WHERE id IN (SELECT value FROM json_each(?)) AND valid_to_run IS NULL");
    const keep = this.db.prepare("UPDATE _pages SET vids = ? WHERE scope = ? AND cursor = ? AND vids IS NULL");
    const forget = this.db.prepare("DELETE FROM _pages WHERE scope = ? AND cursor = ? AND vids IS NULL");
    for (const row of rows) {
      const second = JSON.parse(row.second) as [string, number][];
      const now = new Map((current.all(JSON.stringify(second.map(([id]) => id))) as { id: string; vid: number; fp: number | null }[]).map((c) => [c.id, c]));
      const vids = second.map(([id, fp]) => {
        const cur = now.get(id);
        return cur?.fp === fp ? cur.vid : undefined;
      });
      if (vids.every((v) => v !== undefined)) keep.run(JSON.stringify([...(JSON.parse(row.vids) as number[]), ...vids]), row.scope, row.cursor);
      else forget.run(row.scope, row.cursor);
    }
    this.db.exec("DELETE FROM temp._pages_unsettled");
  }

  /**
   * The ids of a page the walk recognised, after checking it is the one remembered; the page now
   * belongs to this run's walk too (see `keepFrom` and `dropRun`).
   */
  recognise(scope: string, startAfter: string | undefined, fp: number): string {
    const row = this.get.get(scope, startAfter ?? "") as { fp: number; ids: string } | undefined;
    if (!row || row.fp !== fp) throw new Error(`page ${scope} after ${startAfter ?? "(start)"} is not the one this snapshot knows`);
    this.walked.run(scope, startAfter ?? "");
    return row.ids;
  }

  /**
   * Drop the pages a new walk may no longer trust (see the rules above), as run `runId` begins.
   * The versions written before it are then checked for every page that survives; kept in `_meta`
   * (`pages_checked_through`), so the next prune reads only the versions written since, however
   * long ago a page was read.
   */
  prune(runId: number): void {
    this.db.exec("DELETE FROM temp._walked_pages; DELETE FROM temp._pages_unsettled");
    const checked = Number(this.db.prepare("SELECT value FROM _meta WHERE key = 'pages_checked_through'").pluck().get() ?? 0);
    // A member version that ended in the run that read the page is not a change after it (see
    // pruneTouched): the vids are checked once, at the first prune after that run, and only for
    // the pages read since the last prune (at 100k members, 78k lookups on every run before).
    this.db
      .prepare(
        `DELETE FROM _pages WHERE vids IS NULL OR asserted_run IS NULL OR asserted_run > ? AND (scope = 'members' OR scope LIKE 'members?%') AND EXISTS (
          SELECT 1 FROM json_each(_pages.vids) j
          WHERE NOT EXISTS (SELECT 1 FROM _members_v v WHERE v.vid = j.value AND v.valid_to_run IS NULL))`,
      )
      .run(checked);
    const oldest = this.db.prepare("SELECT min(asserted_run) FROM _pages").pluck().get() as number | null;
    if (oldest !== null) for (const resource of WalkedResources) this.pruneTouched(resource, Math.max(oldest, checked));
    this.db.prepare("INSERT OR REPLACE INTO _meta (key, value) VALUES ('pages_checked_through', ?)").run(String(runId - 1));
  }

  /**
   * Drop a resource's pages that list a record which began or ended a version (itself or one of
   * its children) after the run that read the page. Only the versions after the oldest such run
   * are read (through the by-run indexes), so a walk that follows an unchanged one reads nothing.
   */
  private pruneTouched(resource: WalkedResource, since: number): void {
    const parts = [`SELECT id, valid_from_run AS run FROM _${resource}_v WHERE valid_from_run > @since`, `SELECT id, valid_to_run FROM _${resource}_v WHERE valid_to_run > @since AND ended_by IS NOT NULL`];
    const child = ChildOf[resource]?.child;
    if (child) parts.push(`SELECT part, valid_from_run FROM _${child}_v WHERE valid_from_run > @since`, `SELECT part, valid_to_run FROM _${child}_v WHERE valid_to_run > @since AND ended_by IS NOT NULL`);
    this.db.exec("CREATE TEMP TABLE IF NOT EXISTS _touched (id TEXT NOT NULL, run INTEGER NOT NULL); DELETE FROM _touched");
    const n = this.db.prepare(`INSERT INTO _touched ${parts.join(" UNION ALL ")}`).run({ since }).changes;
    if (n === 0) return;
    this.db.exec("CREATE INDEX IF NOT EXISTS temp._touched_id ON _touched (id, run)");
    this.db
      .prepare(
        `DELETE FROM _pages WHERE (scope = @resource OR scope LIKE @like) AND EXISTS (
           SELECT 1 FROM json_each(_pages.ids) j JOIN _touched t ON t.id = j.value WHERE t.run > _pages.asserted_run)`,
      )
      .run({ resource, like: `${resource}?%` });
    this.db.exec("DELETE FROM _touched");
  }

  /**
   * The pages of one scope a walk may recognise. Asked for when the scope's walk begins, so that
   * a walk holds the pages of the scopes in progress only (a million members: 67k pages). Only
   * the scope's own walk writes its rows, so they are what they were when the run began.
   */
  ofScope(scope: string): KnownPage[] {
    return this.db.prepare("SELECT cursor, fp, next FROM _pages WHERE scope = ?").raw().all(scope) as KnownPage[];
  }

  /** A failed run's pages are never trusted: those it read, and those it recognised. */
  dropRun(runId: number): void {
    this.db.prepare("DELETE FROM _pages WHERE run_id = ? OR (scope, cursor) IN (SELECT scope, cursor FROM temp._walked_pages)").run(runId);
    this.db.exec("DELETE FROM temp._walked_pages; DELETE FROM temp._pages_unsettled");
  }

  /**
   * Keep only the pages of the walk that just succeeded (its resumed runs' included): those read
   * since the chain began, and those this run recognised; the pages with second sightings once
   * `settle` has checked them.
   */
  keepFrom(chainStart: number): void {
    this.settle();
    this.db.prepare("DELETE FROM _pages WHERE run_id < ? AND (scope, cursor) NOT IN (SELECT scope, cursor FROM temp._walked_pages)").run(chainStart);
    this.db.exec("DELETE FROM temp._walked_pages");
  }

  /**
   * Forget a resource's pages: its walk listed an id on two of them (a record moved to a scope
   * walked later), and a walk that recognised both would count that id twice.
   */
  forgetResource(resource: string): void {
    this.db.prepare("DELETE FROM _pages WHERE scope = ? OR scope LIKE ?").run(resource, `${resource}?%`);
  }

  clear(): void {
    this.db.exec("DELETE FROM _pages; DELETE FROM temp._pages_unsettled");
  }
}

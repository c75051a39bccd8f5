/**
 * Pages the walk may recognise by their bytes instead of reading them: the rule for when a page
 * may be trusted.
 *
 * - A page is remembered only when every record on it was applied from that very page: none was
 *   quarantined, and none was skipped as a second sighting (a member listed in two groups, whose
 *   version on this page may differ from the one applied from the other group's page).
 * - It carries the version ids its records had then; a member page is recognised only while every
 *   one of them is still current (a member in two groups can be updated from the other group's
 *   page later in a walk, or refetched by the webhook worker, and the page must not go on
 *   asserting the older version: the next run's `prune` drops it). Other
 *   resources list each id once per walk, so their records change only through their own page.
 * - A failed run's pages are never trusted (they may be part of a cursor cycle, or of a walk that
 *   stopped half-way): they are dropped when the run ends failed or is found dead.
 * - Only the last successful walk's pages are kept: an older page describes records as they were.
 * - No two of a resource's pages list one id (a walk that did is forgotten): the ids of a walk
 *   whose every page was recognised are then counted without a scan (see SeenIds).
 */
import type { Database, Statement } from "better-sqlite3";

/** One scope's page: `[cursor ('' for the first page), fingerprint, next cursor]` */
export type KnownPage = [string, number, string | null];

export class PageCache {
  private readonly upsert: Statement;
  private readonly get: Statement;
  private readonly touch: Statement;

  constructor(private readonly db: Database) {
    this.upsert = db.prepare("INSERT OR REPLACE INTO _pages (scope, cursor, fp, next, ids, vids, run_id) VALUES (?, ?, ?, ?, ?, ?, ?)");
    this.get = db.prepare("SELECT fp, ids FROM _pages WHERE scope = ? AND cursor = ?");
    this.touch = db.prepare("UPDATE _pages SET run_id = ? WHERE scope = ? AND cursor = ?");
  }

  /** Remember a page whose every record was applied from it, with their version ids. */
  remember(scope: string, startAfter: string | undefined, fp: number, next: string | undefined, ids: readonly string[], vids: readonly number[], runId: number): void {
    this.upsert.run(scope, startAfter ?? "", fp, next ?? null, JSON.stringify(ids), JSON.stringify(vids), runId);
  }

  /**
   * The ids of a page the walk recognised, after checking it is the one remembered; the page now
   * belongs to this run's walk too.
   */
  recognise(scope: string, startAfter: string | undefined, fp: number, runId: number): string {
    const row = this.get.get(scope, startAfter ?? "") as { fp: number; ids: string } | undefined;
    if (!row || row.fp !== fp) throw new Error(`page ${scope} after ${startAfter ?? "(start)"} is not the one this snapshot knows`);
    this.touch.run(runId, scope, startAfter ?? "");
    return row.ids;
  }

  /** Drop the pages a new walk may no longer trust (a member page whose versions are not all current). */
  prune(): void {
    this.db.exec(`
      DELETE FROM _pages WHERE vids IS NULL OR (scope = 'members' OR scope LIKE 'members?%') AND EXISTS (
        SELECT 1 FROM json_each(_pages.vids) j
        WHERE NOT EXISTS (SELECT 1 FROM _members_v v WHERE v.vid = j.value AND v.valid_to_run IS NULL))`);
  }

  /**
   * The pages of one scope a walk may recognise. Asked for when the scope's walk begins, so that
   * a walk holds the pages of the scopes in progress only (a million members: 67k pages). Only
   * the scope's own walk writes its rows, so they are what they were when the run began.
   */
  ofScope(scope: string): KnownPage[] {
    return this.db.prepare("SELECT cursor, fp, next FROM _pages WHERE scope = ?").raw().all(scope) as KnownPage[];
  }

  /** A failed run's pages are never trusted. */
  dropRun(runId: number): void {
    this.db.prepare("DELETE FROM _pages WHERE run_id = ?").run(runId);
  }

  /** Keep only the pages of the walk that just succeeded (its resumed runs' included). */
  keepFrom(chainStart: number): void {
    this.db.prepare("DELETE FROM _pages WHERE run_id < ?").run(chainStart);
  }

  /**
   * Forget a resource's pages: its walk listed an id on two of them (a record moved to a scope
   * walked later), and a walk that recognised both would count that id twice.
   */
  forgetResource(resource: string): void {
    this.db.prepare("DELETE FROM _pages WHERE scope = ? OR scope LIKE ?").run(resource, `${resource}?%`);
  }

  clear(): void {
    this.db.exec("DELETE FROM _pages");
  }
}

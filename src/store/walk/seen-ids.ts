/**
 * The ids a walk has seen, kept on disk so that a resumed walk can still prove deletes. Members,
 * which one walk can list twice (a member in two groups), are kept one row per id to tell the
 * first sighting from the second; other resources one row per page, appended (cheaper: an id is
 * listed twice in a walk only when its record moved to a scope walked later).
 *
 * The exact count of distinct ids (a scan of every id seen) is asked once per walk, and not at all
 * for a resource whose every page this walk was recognised by its bytes: the page cache keeps no
 * two pages that list one id (see `duplicated`), so such pages hold each id once.
 */
import type { Database, Statement } from "better-sqlite3";
import type { WalkedResource } from "../schema/resources.js";

export class SeenIds {
  private readonly batch: Statement;
  private readonly page: Statement;
  private readonly noteStmt: Statement;
  /** Exact counts asked this walk, with the plain count they were taken at (a rolled-back page changes it). */
  private readonly exact = new Map<string, { sum: number; n: number }>();

  constructor(private readonly db: Database) {
    this.batch = db.prepare("INSERT OR IGNORE INTO _seen (resource, id) SELECT ?, value FROM json_each(?) RETURNING id").pluck();
    this.page = db.prepare("INSERT INTO _seen_pages (resource, ids) VALUES (?, ?)");
    // In the page's own transaction: a rolled-back page takes its note with it.
    this.noteStmt = db.prepare("INSERT OR IGNORE INTO _meta (key, value) VALUES (?, '1')");
  }

  /** Mark members seen; returns the ids seen for the first time in this walk. */
  firstSightings(resource: "members", idsJson: string): Set<string> {
    return new Set(this.batch.all(resource, idsJson) as string[]);
  }

  /**
   * Mark a page of a resource other than members seen. `again`: the page may hold ids this walk
   * has seen already (its scope is walked again from its start, or re-read to confirm a delete):
   * only the new ones are kept, so that the count of ids seen stays exact (a scan, on that path only).
   * `recognised`: the page is one the page cache held (its ids are the cached ones).
   */
  markPage(resource: Exclude<WalkedResource, "members">, idsJson: string, again = false, recognised = false): void {
    if (again || !recognised) this.noteRead(resource);
    if (!again) {
      this.page.run(resource, idsJson);
      return;
    }
    this.db
      .prepare(
        `INSERT INTO _seen_pages (resource, ids)
         SELECT @resource, json_group_array(n.value) FROM json_each(@ids) n
         WHERE n.value NOT IN (SELECT j.value FROM _seen_pages p, json_each(p.ids) j WHERE p.resource = @resource)
         HAVING COUNT(*) > 0`,
      )
      .run({ resource, ids: idsJson });
  }

  /**
   * How many ids of a resource the walk has seen. Members are kept one row per id; other
   * resources one row per page, so a page walked twice (a resumed run walks a scope with a
   * quarantined item again from its start) counts its ids twice, unless `distinct` is asked for
   * (a scan of every id seen, made once per walk, where the exact number matters and a page of
   * the walk was read rather than recognised).
   */
  count(resource: WalkedResource, distinct = false): number {
    if (resource === "members") return this.db.prepare("SELECT COUNT(*) FROM _seen WHERE resource = ?").pluck().get(resource) as number;
    const sum = this.db.prepare("SELECT COALESCE(SUM(json_array_length(ids)), 0) FROM _seen_pages WHERE resource = ?").pluck().get(resource) as number;
    if (!distinct || !this.anyRead(resource)) return sum;
    const known = this.exact.get(resource);
    if (known?.sum === sum) return known.n;
    const n = this.db.prepare("SELECT COUNT(DISTINCT j.value) FROM _seen_pages p, json_each(p.ids) j WHERE p.resource = ?").pluck().get(resource) as number;
    this.exact.set(resource, { sum, n });
    return n;
  }

  /**
   * Whether this walk listed an id of the resource twice (a record moved to a scope walked later).
   * Asked when a walk succeeds: its pages are then forgotten, so that the cache never holds two
   * pages listing one id, and a later walk that recognises every page may trust their count.
   */
  duplicated(resource: Exclude<WalkedResource, "members">): boolean {
    return this.anyRead(resource) && this.count(resource, true) < this.count(resource);
  }

  /** A page of the resource was read this walk (or walked again): its ids may repeat another's. */
  private noteRead(resource: string): void {
    this.noteStmt.run(`${READ_KEY}${resource}`);
  }

  private anyRead(resource: string): boolean {
    return this.db.prepare("SELECT 1 FROM _meta WHERE key = ?").get(`${READ_KEY}${resource}`) !== undefined;
  }

  /**
   * Forget every sighting: a new walk begins (seen ids of an abandoned walk prove nothing). The
   * children an abandoned walk found gone were never deleted, while their parents' fingerprints
   * already say "read": those parents lose their fingerprint, so the next walk reads them again.
   */
  clear(): void {
    // Children noted gone and still current: their delete was never made (an abandoned walk, or
    // a confirmation that could not read whole). The pages that list their parents are forgotten
    // too, or the next walk would recognise them by their bytes and never read the parent.
    const pending = this.db.prepare("SELECT 1 FROM _child_gone g WHERE EXISTS (SELECT 1 FROM _plans_v v WHERE v.vid = g.vid AND v.valid_to_run IS NULL) OR EXISTS (SELECT 1 FROM _coverages_v v WHERE v.vid = g.vid AND v.valid_to_run IS NULL) LIMIT 1").get();
    if (pending) {
      this.db.exec(`
        UPDATE _groups_v SET fp = NULL WHERE valid_to_run IS NULL AND id IN (
          SELECT v.part FROM _child_gone g JOIN _plans_v v ON v.vid = g.vid WHERE g.resource = 'plans' AND v.valid_to_run IS NULL);
        UPDATE _members_v SET fp = NULL WHERE valid_to_run IS NULL AND id IN (
          SELECT v.part FROM _child_gone g JOIN _coverages_v v ON v.vid = g.vid WHERE g.resource = 'coverages' AND v.valid_to_run IS NULL);
        DELETE FROM _pages WHERE EXISTS (
          SELECT 1 FROM json_each(_pages.ids) j WHERE j.value IN (
            SELECT v.part FROM _child_gone g JOIN _plans_v v ON v.vid = g.vid WHERE g.resource = 'plans' AND v.valid_to_run IS NULL
            UNION SELECT v.part FROM _child_gone g JOIN _coverages_v v ON v.vid = g.vid WHERE g.resource = 'coverages' AND v.valid_to_run IS NULL));`);
    }
    this.db.exec("DELETE FROM _seen; DELETE FROM _seen_pages; DELETE FROM _child_gone;");
    this.db.prepare("DELETE FROM _meta WHERE key LIKE ?").run(`${READ_KEY}%`);
    this.exact.clear();
  }
}

/** `_meta` keys, one per resource, that say the walk read (not recognised) one of its pages. */
const READ_KEY = "seen_read:";

/** SQL for the ids a run has seen of a resource (one `?` parameter: the resource). */
export function seenIdsSql(resource: WalkedResource): string {
  return resource === "members"
    ? "SELECT id FROM _seen WHERE resource = ?"
    : "SELECT j.value FROM _seen_pages p, json_each(p.ids) j WHERE p.resource = ?";
}

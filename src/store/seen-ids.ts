/**
 * The ids a walk has seen, kept on disk so that a resumed walk can still prove deletes. Members,
 * which one walk can list twice (a member in two groups), are kept one row per id to tell the
 * first sighting from the second; other resources one row per page, appended (cheaper, and each
 * of their ids is listed once per walk).
 */
import type { Database, Statement } from "better-sqlite3";
import type { WalkedResource } from "./resources.js";

export class SeenIds {
  private readonly batch: Statement;
  private readonly page: Statement;

  constructor(private readonly db: Database) {
    this.batch = db.prepare("INSERT OR IGNORE INTO _seen (resource, id) SELECT ?, value FROM json_each(?) RETURNING id").pluck();
    this.page = db.prepare("INSERT INTO _seen_pages (resource, ids) VALUES (?, ?)");
  }

  /** Mark members seen; returns the ids seen for the first time in this walk. */
  firstSightings(resource: "members", idsJson: string): Set<string> {
    return new Set(this.batch.all(resource, idsJson) as string[]);
  }

  /**
   * Mark a page of a resource other than members seen. `again`: the page may hold ids this walk
   * has seen already (its scope is walked again from its start, or re-read to confirm a delete):
   * only the new ones are kept, so that the count of ids seen stays exact (a scan, on that path only).
   */
  markPage(resource: Exclude<WalkedResource, "members">, idsJson: string, again = false): void {
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
   * (a scan of every id seen: only where the exact number matters).
   */
  count(resource: WalkedResource, distinct = false): number {
    const sql =
      resource === "members"
        ? "SELECT COUNT(*) FROM _seen WHERE resource = ?"
        : distinct
          ? "SELECT COUNT(DISTINCT j.value) FROM _seen_pages p, json_each(p.ids) j WHERE p.resource = ?"
          : "SELECT COALESCE(SUM(json_array_length(ids)), 0) FROM _seen_pages WHERE resource = ?";
    return this.db.prepare(sql).pluck().get(resource) as number;
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
  }
}

/** SQL for the ids a run has seen of a resource (one `?` parameter: the resource). */
export function seenIdsSql(resource: WalkedResource): string {
  return resource === "members"
    ? "SELECT id FROM _seen WHERE resource = ?"
    : "SELECT j.value FROM _seen_pages p, json_each(p.ids) j WHERE p.resource = ?";
}

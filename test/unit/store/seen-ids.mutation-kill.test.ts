/**
 * The ids a walk has seen, asked directly on a real snapshot file: first sightings of members, a
 * page walked again keeping only its new ids, and the plain and exact counts that the delete guard
 * reads. The counts are those of the ids written here.
 */
import { describe, expect, it } from "vitest";
import { SeenIds, seenIdsSql } from "../../../src/store/walk/seen-ids.js";
import { useTempStores } from "../../helpers/temp-store.js";

describe("seen ids", () => {
  const setup = useTempStores();

  it("members: each id once, the first sighting told apart from a second", () => {
    const { db } = setup();
    const seen = new SeenIds(db);
    expect(seen.firstSightings("members", '["m1","m2"]')).toEqual(new Set(["m1", "m2"]));
    expect(seen.firstSightings("members", '["m2","m3"]')).toEqual(new Set(["m3"]));
    expect(seen.count("members")).toBe(3);
    expect(seen.count("members", true)).toBe(3);
    expect((db.prepare(seenIdsSql("members")).pluck().all("members") as string[]).sort()).toEqual(["m1", "m2", "m3"]);
  });

  it("other resources: a page walked twice counts twice, unless the exact count is asked; `again` keeps only new ids", () => {
    const { db } = setup();
    const seen = new SeenIds(db);
    seen.markPage("claims", '["a","b"]');
    seen.markPage("claims", '["a"]');
    expect(seen.count("claims")).toBe(3);
    expect(seen.count("claims", true)).toBe(2);
    seen.markPage("claims", '["b","c"]', true);
    expect(seen.count("claims")).toBe(4);
    expect(seen.count("claims", true)).toBe(3);
    const pages = () => db.prepare("SELECT COUNT(*) FROM _seen_pages").pluck().get();
    seen.markPage("claims", '["a","c"]', true);
    expect(pages()).toBe(3);
    seen.markPage("groups", '["a"]', true);
    expect(seen.count("groups")).toBe(1);
    expect(seen.count("claims")).toBe(4);
    expect(seen.count("designs")).toBe(0);
    expect(seen.count("designs", true)).toBe(0);
    expect((db.prepare(seenIdsSql("claims")).pluck().all("claims") as string[]).sort()).toEqual(["a", "a", "b", "c"]);
  });

  it("clear forgets every sighting", () => {
    const { db } = setup();
    const seen = new SeenIds(db);
    seen.firstSightings("members", '["m1"]');
    seen.markPage("claims", '["a"]');
    seen.clear();
    expect([seen.count("members"), seen.count("claims"), seen.count("claims", true)]).toEqual([0, 0, 0]);
    expect(seen.firstSightings("members", '["m1"]')).toEqual(new Set(["m1"]));
  });

  it("clear: a child noted gone but still current (its delete never made) takes its parent's fingerprint and pages with it; others stay", () => {
    const { db } = setup();
    const version = (r: string, id: string, part: string | null, fp: number | null, ended = false) =>
      Number(
        db
          .prepare(`INSERT INTO _${r}_v (id, valid_from_run, valid_to_run, op, ended_by, part, fp) VALUES (?, 1, ?, 'insert', ?, ?, ?)`)
          .run(id, ended ? 2 : null, ended ? "update" : null, part, fp).lastInsertRowid,
      );
    version("groups", "g1", null, 11);
    version("groups", "g2", null, 22);
    version("members", "m1", null, 33);
    version("members", "m2", null, 44);
    const p1 = version("plans", "p1", "g1", 1);
    version("plans", "p2", "g2", 2);
    const p3old = version("plans", "p3", "g2", 3, true); // an old version: its delete is not pending
    const c1 = version("coverages", "c1", "m1", 4);
    const gone = db.prepare("INSERT INTO _child_gone (resource, vid, scope) VALUES (?, ?, 'x')");
    gone.run("plans", p1);
    gone.run("plans", p3old);
    gone.run("coverages", c1);
    const page = db.prepare("INSERT INTO _pages (scope, cursor, fp, ids, run_id) VALUES (?, '', 1, ?, 1)");
    for (const [scope, ids] of [["a", '["g1","x"]'], ["b", '["g2"]'], ["c", '["m1"]'], ["d", '["m2"]']]) page.run(scope, ids);

    new SeenIds(db).clear();

    const fps = db.prepare("SELECT id, fp FROM _groups_v UNION ALL SELECT id, fp FROM _members_v ORDER BY id").all();
    expect(fps).toEqual([
      { id: "g1", fp: null },
      { id: "g2", fp: 22 },
      { id: "m1", fp: null },
      { id: "m2", fp: 44 },
    ]);
    expect(db.prepare("SELECT scope FROM _pages ORDER BY scope").pluck().all()).toEqual(["b", "d"]);
    expect(db.prepare("SELECT COUNT(*) FROM _child_gone").pluck().get()).toBe(0);
  });

  it("clear with only old versions noted gone forgets the notes and leaves every fingerprint and page", () => {
    const { db } = setup();
    db.prepare("INSERT INTO _groups_v (id, valid_from_run, op, fp) VALUES ('g1', 1, 'insert', 11)").run();
    const old = db.prepare("INSERT INTO _plans_v (id, valid_from_run, valid_to_run, op, ended_by, part) VALUES ('p1', 1, 2, 'insert', 'delete', 'g1')").run().lastInsertRowid;
    db.prepare("INSERT INTO _child_gone (resource, vid, scope) VALUES ('plans', ?, 'x')").run(old);
    db.prepare("INSERT INTO _pages (scope, cursor, fp, ids, run_id) VALUES ('a', '', 1, '[\"g1\"]', 1)").run();
    new SeenIds(db).clear();
    expect(db.prepare("SELECT fp FROM _groups_v").pluck().all()).toEqual([11]);
    expect(db.prepare("SELECT COUNT(*) FROM _pages").pluck().get()).toBe(1);
    expect(db.prepare("SELECT COUNT(*) FROM _child_gone").pluck().get()).toBe(0);
  });
});

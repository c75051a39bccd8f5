/**
 * The ids a walk has seen, asked directly on a real snapshot file: first sightings of members, a
 * page walked again keeping only its new ids, and the plain and exact counts that the delete guard
 * reads. The counts are those of the ids written here.
 */
import { describe, expect, it } from "vitest";
import { SeenIds, seenIdsSql } from "../../../src/store/seen-ids.js";
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
});

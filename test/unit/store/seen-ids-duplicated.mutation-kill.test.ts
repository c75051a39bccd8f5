/**
 * Whether a walk listed an id twice (`duplicated`, which decides that a resource's cached pages
 * are forgotten when the walk succeeds), and what `clear` forgets: asked directly on a real
 * snapshot file. The mutation run of 2026-11-26 found these reached by no test it runs.
 */
import { describe, expect, it } from "vitest";
import { SeenIds } from "../../../src/store/walk/seen-ids.js";
import { useTempStores } from "../../helpers/temp-store.js";

describe("seen ids: a walk that listed an id twice", () => {
  const setup = useTempStores();

  it("pages read with an id in two of them: duplicated; pages read with none in common: not", () => {
    const { db } = setup();
    const seen = new SeenIds(db);
    seen.markPage("groups", '["a","b"]');
    seen.markPage("groups", '["c"]');
    expect(seen.duplicated("groups")).toBe(false);
    seen.markPage("groups", '["c","d"]');
    expect(seen.duplicated("groups")).toBe(true);
    // Per resource: the designs' pages are their own.
    seen.markPage("designs", '["a"]');
    expect(seen.duplicated("designs")).toBe(false);
  });

  it("pages only recognised by their bytes note no read: no scan, and duplicated is false (the cache never holds two pages listing one id)", () => {
    const { db } = setup();
    const seen = new SeenIds(db);
    seen.markPage("claims", '["a","b"]', false, true);
    seen.markPage("claims", '["b"]', false, true);
    expect(db.prepare("SELECT key FROM _meta WHERE key LIKE 'seen_read:%'").pluck().all()).toEqual([]);
    expect(seen.duplicated("claims")).toBe(false);
    // The plain count is the sum of the pages; the exact one is not asked for without a read.
    expect(seen.count("claims", true)).toBe(3);
    // One page read: the exact count and the duplicate are seen.
    seen.markPage("claims", '["e"]');
    expect(seen.count("claims", true)).toBe(3);
    expect(seen.duplicated("claims")).toBe(true);
  });

  it("a recognised page walked again (`again`) is a read: its new ids only are kept", () => {
    const { db } = setup();
    const seen = new SeenIds(db);
    seen.markPage("designs", '["x"]', false, true);
    seen.markPage("designs", '["x","y"]', true, true);
    expect(db.prepare("SELECT key FROM _meta WHERE key LIKE 'seen_read:%'").pluck().all()).toEqual(["seen_read:designs"]);
    expect(seen.count("designs")).toBe(2);
    expect(seen.duplicated("designs")).toBe(false);
  });

  it("clear forgets the sightings and the reads, and leaves every other _meta key", () => {
    const { db } = setup();
    const seen = new SeenIds(db);
    db.prepare("INSERT OR REPLACE INTO _meta (key, value) VALUES ('kept_for_the_test', 'v')").run();
    seen.markPage("groups", '["a"]');
    seen.markPage("groups", '["a"]');
    expect(seen.duplicated("groups")).toBe(true);
    const metaBefore = db.prepare("SELECT key FROM _meta WHERE key NOT LIKE 'seen_read:%' ORDER BY key").pluck().all();
    expect(metaBefore).toContain("kept_for_the_test");
    seen.clear();
    expect(seen.count("groups")).toBe(0);
    expect(db.prepare("SELECT key FROM _meta WHERE key NOT LIKE 'seen_read:%' ORDER BY key").pluck().all()).toEqual(metaBefore);
    // After clear, recognised pages alone note no read: the old read is gone.
    seen.markPage("groups", '["a","b"]', false, true);
    seen.markPage("groups", '["b"]', false, true);
    expect(seen.duplicated("groups")).toBe(false);
  });
});

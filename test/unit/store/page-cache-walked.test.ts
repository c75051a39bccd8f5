import { afterEach, describe, expect, it } from "vitest";
import { PageCache } from "../../../src/store/page-cache.js";
import { tempStore, type TempStore } from "../../helpers/temp-store.js";

/**
 * The pages a walk recognises are listed on the connection (temp._walked_pages), not written to
 * their rows: these are the rules that list has to keep (see PageCache).
 */
describe("pages a walk recognised", () => {
  let t: TempStore | undefined;
  afterEach(() => t?.cleanup());

  const setup = () => {
    t = tempStore();
    const pages = new PageCache(t.db);
    for (const [cursor, run] of [["", 1], ["a", 1], ["b", 1]] as const) pages.remember("designs", cursor || undefined, 7, "z", [`d-${cursor}`], [1], run);
    const kept = () => (t!.db.prepare("SELECT cursor || ':' || run_id FROM _pages ORDER BY cursor").pluck().all() as string[]);
    return { pages, kept };
  };

  it("a run that succeeds keeps the pages it recognised (and their reading run) and drops those it did not walk", () => {
    const { pages, kept } = setup();
    pages.prune(2);
    expect(pages.recognise("designs", undefined, 7)).toBe('["d-"]');
    pages.recognise("designs", "b", 7);
    pages.remember("designs", "c", 7, undefined, ["d-c"], [2], 2);
    pages.keepFrom(2);
    expect(kept()).toEqual([":1", "b:1", "c:2"]);
  });

  it("a run that fails drops the pages it read and the pages it recognised; a later run's list starts empty", () => {
    const { pages, kept } = setup();
    pages.prune(2);
    pages.recognise("designs", "a", 7);
    pages.remember("designs", "c", 7, undefined, ["d-c"], [2], 2);
    pages.dropRun(2);
    expect(kept()).toEqual([":1", "b:1"]);
    // Run 3 recognises nothing: what run 2 recognised does not count for it.
    pages.prune(3);
    pages.recognise("designs", "b", 7);
    pages.keepFrom(3);
    expect(kept()).toEqual(["b:1"]);
  });

  it("a page recognised in a group that rolled back was not walked", () => {
    const { pages, kept } = setup();
    pages.prune(2);
    t!.db.exec("BEGIN");
    pages.recognise("designs", "a", 7);
    t!.db.exec("ROLLBACK");
    pages.recognise("designs", "b", 7);
    pages.keepFrom(2);
    expect(kept()).toEqual(["b:1"]);
  });

  it("a page whose bytes differ is refused", () => {
    const { pages } = setup();
    expect(() => pages.recognise("designs", "a", 8)).toThrow(/not the one this snapshot knows/);
  });
});

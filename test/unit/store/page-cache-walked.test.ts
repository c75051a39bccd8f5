import { afterEach, describe, expect, it } from "vitest";
import { PageCache } from "../../../src/store/walk/page-cache.js";
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

/**
 * A member page's version ids are checked at the first prune after the run that read it, and only
 * then (later changes are runs after it, which pruneTouched reads): the check that used to read
 * every member page on every run.
 */
describe("member pages' version ids", () => {
  let t: TempStore | undefined;
  afterEach(() => t?.cleanup());

  it("a member updated later in the walk that read its page is caught at the next prune; the others stay", () => {
    t = tempStore();
    const db = t.db;
    const pages = new PageCache(db);
    const version = db.prepare("INSERT INTO _members_v (vid, id, valid_from_run, op) VALUES (?, ?, ?, 'insert')");
    pages.prune(2);
    version.run(10, "m1", 2);
    version.run(11, "m2", 2);
    pages.remember("members?groupId=g1", undefined, 7, undefined, ["m1"], [10], 2);
    pages.remember("members?groupId=g2", undefined, 7, undefined, ["m2"], [11], 2);
    // m1 is in a second group, walked later in run 2, whose page has a newer m1.
    db.prepare("UPDATE _members_v SET valid_to_run = 2, ended_by = 'update' WHERE vid = 10").run();
    version.run(12, "m1", 2);
    pages.prune(3);
    const scopes = () => db.prepare("SELECT scope FROM _pages ORDER BY scope").pluck().all();
    expect(scopes()).toEqual(["members?groupId=g2"]);
    // Run 3 reads g1 again; m2 changes through another page of run 3: caught at prune 4 (the
    // ids of a run's pages are checked once, after that run), and g1 stays.
    pages.remember("members?groupId=g1", undefined, 8, undefined, ["m1"], [12], 3);
    db.prepare("UPDATE _members_v SET valid_to_run = 3, ended_by = 'update' WHERE vid = 11").run();
    version.run(13, "m2", 3);
    pages.prune(4);
    expect(scopes()).toEqual(["members?groupId=g1"]);
  });
});

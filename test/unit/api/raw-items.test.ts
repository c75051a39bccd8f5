import fc from "fast-check";
import { describe, expect, it } from "vitest";
import { rawListItems } from "../../../src/api/raw-items.js";

describe("rawListItems", () => {
  it("gives each item's text, for every envelope, whitespace and escapes included", () => {
    fc.assert(
      fc.property(
        fc.array(fc.jsonValue(), { maxLength: 8 }),
        fc.constantFrom("data", "items", "results", null),
        fc.boolean(),
        fc.boolean(),
        (items, key, pretty, before) => {
          const list = pretty ? JSON.stringify(items, null, 2) : JSON.stringify(items);
          const text = key === null ? list : before ? `{"hasMore": true, "x": {"data": [1]}, "${key}": ${list}}` : `{ "${key}" : ${list} , "hasMore":false}`;
          const raw = rawListItems(text);
          expect(raw).toBeDefined();
          expect(raw!.map((r) => JSON.parse(r) as unknown)).toEqual(JSON.parse(list) as unknown[]);
        },
      ),
      { numRuns: 300 },
    );
  });

  it("keeps strings with quotes, backslashes and brackets intact", () => {
    const text = String.raw`{"data":[{"id":"a\"]},{","n":"\\"},{"id":"b","s":"[{\\\"x"}]}`;
    expect(rawListItems(text)).toEqual([String.raw`{"id":"a\"]},{","n":"\\"}`, String.raw`{"id":"b","s":"[{\\\"x"}`]);
  });

  it("answers undefined for shapes it does not know or broken text", () => {
    expect(rawListItems('{"other":[1,2]}')).toBeUndefined();
    expect(rawListItems('"text"')).toBeUndefined();
    expect(rawListItems('{"data":[{"id":"a"}')).toBeUndefined();
    expect(rawListItems("<html>")).toBeUndefined();
  });
});

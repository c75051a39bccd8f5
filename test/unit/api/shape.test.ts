import { describe, expect, it } from "vitest";
import { Member } from "../../../schemas/member.js";
import { describeShape, parseJson, unwrapList, validate } from "../../../src/api/shape.js";
import { ResponseShapeError } from "../../../src/errors.js";
import { decodeUtf8 } from "../../../src/api/transport.js";

describe("decodeUtf8", () => {
  it("reads a body as fetch would: UTF-8, a leading byte-order mark dropped, malformed bytes replaced", () => {
    expect(decodeUtf8(Buffer.from('{"name":"Zoë 李"}'))).toBe('{"name":"Zoë 李"}');
    expect(decodeUtf8(Buffer.concat([Buffer.from([0xef, 0xbb, 0xbf]), Buffer.from("[1]")]))).toBe("[1]");
    expect(decodeUtf8(Buffer.from([0x22, 0xff, 0x22]))).toBe('"\ufffd"');
    // Only a leading mark is dropped.
    expect(decodeUtf8(Buffer.from("a\ufeff"))).toBe("a\ufeff");
  });
});

describe("unwrapList", () => {
  it("accepts {data}, a bare array, {items} and {results}, and reads a boolean hasMore", () => {
    expect(unwrapList({ data: [1], hasMore: false, totalCount: 9 }, "e")).toEqual({ items: [1], hasMore: false });
    expect(unwrapList([1, 2], "e")).toEqual({ items: [1, 2] });
    expect(unwrapList({ items: [3] }, "e")).toEqual({ items: [3], hasMore: undefined });
    expect(unwrapList({ results: [4], hasMore: "no" }, "e")).toEqual({ items: [4], hasMore: undefined });
  });
  it("rejects anything else, naming the endpoint", () => {
    for (const bad of [{ data: {} }, { rows: [] }, null, "x", 3]) {
      expect(() => unwrapList(bad, "GET /v2/groups")).toThrow(ResponseShapeError);
      expect(() => unwrapList(bad, "GET /v2/groups")).toThrow(/^GET \/v2\/groups: expected a list/);
    }
  });
});

describe("parseJson", () => {
  it("parses JSON and refuses the rest", () => {
    expect(parseJson('{"a":1}', "e")).toEqual({ a: 1 });
    expect(() => parseJson("<html>oops</html>", "GET /v2/designs", 200)).toThrow(/GET \/v2\/designs: the 200 answer is not JSON.*oops/);
    expect(() => parseJson("  ", "e")).toThrow(/empty body/);
  });
});

describe("validate", () => {
  it("returns the parsed value, unknown fields kept", () => {
    expect(validate(Member, { id: "m1", extra: 1 }, "e", "Member")).toEqual({ id: "m1", extra: 1 });
  });
  it("names the problem and shows types, never values (PHI)", () => {
    const bad = { id: 7, ssn: "123456789", firstName: "Zoë" };
    const err = (() => {
      try {
        validate(Member, bad, "GET /v2/members", "Member (page 0, item 3)");
      } catch (e) {
        return e as Error;
      }
    })();
    expect(err).toBeInstanceOf(ResponseShapeError);
    expect(err?.message).toMatch(/GET \/v2\/members: not a valid Member \(page 0, item 3\) \(id: /);
    expect(err?.message).toContain("ssn: string");
    expect(err?.message).not.toContain("123456789");
    expect(err?.message).not.toContain("Zoë");
  });
  it("describeShape lists types only", () => {
    expect(describeShape({ a: "x", b: [1, 2], c: { d: 1 }, e: null })).toBe("{a: string, b: array(2), c: {d: number}, e: null}");
  });
});

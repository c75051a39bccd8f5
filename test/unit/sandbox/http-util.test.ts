import { describe, expect, it } from "vitest";
import { isLoopback } from "../../../src/sandbox/http-util.js";
import { money } from "../../../src/sandbox/records.js";
import { canonicalJson } from "../../../src/sandbox/changes.js";
import { takePage } from "../../../src/sandbox/listing.js";

describe("small helpers", () => {
  it("recognises loopback addresses only", () => {
    for (const a of ["127.0.0.1", "::1", "::ffff:127.0.0.1", "127.0.0.9"]) expect(isLoopback(a)).toBe(true);
    for (const a of ["10.0.0.1", "192.168.1.2", "::ffff:10.0.0.1", undefined]) expect(isLoopback(a)).toBe(false);
  });
  it("formats cents as decimal strings", () => {
    expect(money(0)).toBe("0.00");
    expect(money(123456)).toBe("1234.56");
    expect(money(5)).toBe("0.05");
    expect(money(-250)).toBe("-2.50");
  });
  it("canonical JSON ignores key order", () => {
    expect(canonicalJson({ b: 1, a: { d: [1, { y: 1, x: 2 }], c: null } })).toBe(canonicalJson({ a: { c: null, d: [1, { x: 2, y: 1 }] }, b: 1 }));
    expect(canonicalJson({ a: 1 })).not.toBe(canonicalJson({ a: 2 }));
    expect(canonicalJson({ b: 1, a: { d: [1, { y: 1, x: 2 }], c: null } })).toBe('{"a":{"c":null,"d":[1,{"x":2,"y":1}]},"b":1}');
  });
  it("takePage looks one item ahead for hasMore", () => {
    expect(takePage([1, 2, 3][Symbol.iterator](), 2)).toEqual({ items: [1, 2], hasMore: true });
    expect(takePage([1, 2][Symbol.iterator](), 2)).toEqual({ items: [1, 2], hasMore: false });
    expect(takePage([][Symbol.iterator](), 2)).toEqual({ items: [], hasMore: false });
  });
});

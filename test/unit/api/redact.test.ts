import { describe, expect, it } from "vitest";
import { BenefitsSyncError, redact } from "../../../src/errors.js";

describe("redact: SSN-shaped numbers", () => {
  it.each([
    ["dashed", "ssn 123-45-6789 here"],
    ["undashed", "member 123456789 here"],
    ["spaced", "member 123 45 6789 here"],
    ["mixed separators", "member 123-45 6789 here"],
    ["glued to letters", "id m123456789x"],
    ["in a URL path", "GET /v1/members/123456789?x=1"],
    ["at the start and end", "123456789"],
    ["a JSON number", '{"n":123456789}'],
  ])("masks a 9-digit run: %s", (_, text) => {
    const out = redact(text);
    expect(out.replace(/\D/g, "")).not.toMatch(/\d{9}/);
    expect(out).not.toMatch(/123.?45.?6789/);
    expect(out).toContain("[ssn]");
  });

  it("leaves longer digit runs (timestamps in ms, 10+ digits) and short numbers alone", () => {
    expect(redact("at 1732345678901 ms")).toBe("at 1732345678901 ms");
    expect(redact("id 1234567890")).toBe("id 1234567890");
    expect(redact("page 2 of 12345678, 2024-01-15")).toBe("page 2 of 12345678, 2024-01-15");
    expect(redact("phone 555-123-4567")).toBe("phone 555-123-4567");
  });
});

describe("redact: ssn values by key", () => {
  it.each([
    ["JSON", '{"id":"m1","ssn":"12-345-678X","lastName":"Doe"}', "12-345-678X"],
    ["JSON with spaces", '{ "ssn" : "XXX-XX-1234" }', "XXX-XX-1234"],
    ["JSON with an escaped quote", '{"ssn":"12\\"34","a":1}', "34"],
    ["JSON inside a JSON string", '"{\\"ssn\\":\\"987-65-43\\",\\"a\\":1}"', "987-65-43"],
    ["a truncated JSON string", '{"ssn":"98765-43', "98765-43"],
    ["a JSON number", '{"ssn": 87654321}', "87654321"],
    ["a query parameter", "GET /v2/members?ssn=876-54-321&x=1", "876-54-321"],
    ["key: value", "ssn: 8765-4321, name", "8765-4321"],
    ["upper case, prefixed key", "dependentSSN=87654X321 ok", "87654X321"],
    ["single quotes", "{'ssn': '87 654 321'}", "87 654 321"],
  ])("masks the value: %s", (_, text, secret) => {
    const out = redact(text);
    expect(out).not.toContain(secret);
    expect(out).toContain("[ssn]");
  });

  it("keeps the text around the value", () => {
    expect(redact('{"id":"m1","ssn":"x-1","lastName":"Doe"}')).toBe('{"id":"m1","ssn":"[ssn]","lastName":"Doe"}');
    expect(redact("GET /v2/members?ssn=x1&limit=5")).toBe("GET /v2/members?ssn=[ssn]&limit=5");
    expect(redact("classname=x, ssnless words")).toBe("classname=x, ssnless words");
  });

  it("is applied to every error message", () => {
    class E extends BenefitsSyncError {
      readonly code = "X";
    }
    expect(new E('failed for {"ssn":"8765-4321"} and 123456789').message).toBe('failed for {"ssn":"[ssn]"} and [ssn]');
  });

  // Its cost on large texts is measured by `npm run bench` (a ratio, not a bar in a test).
  it("handles a large text: long digit runs kept, every ssn field masked", () => {
    const big = `${"abc 12345678901 ".repeat(20_000)}${'"ssn":"1"'.repeat(1000)}`;
    const out = redact(big);
    expect(out.match(/12345678901/g)).toHaveLength(20_000);
    expect(out.match(/"ssn":"\[ssn\]"/g)).toHaveLength(1000);
  });
});

describe("redact: readable messages stay readable", () => {
  it("a validation message about the ssn field keeps its words", () => {
    expect(redact("ssn: expected an SSN of 9 digits")).toBe("ssn: expected an SSN of 9 digits");
    expect(redact("ssn_last4: 4 digits")).toBe("ssn_last4: 4 digits");
  });
});

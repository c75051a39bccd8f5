/**
 * The branches of the issue 38 rule, one example each, for the mutation tests (stryker mutates
 * ssn-key.ts, pii.ts and canonical.ts): the key classes, the value checks of masking's own keys,
 * typed pairs, the JSON-text look the sinks and the scrub use, and the canonical writer's options.
 * Each expected value is written out by hand.
 */
import { describe, expect, it } from "vitest";
import { holdsMore, jsonMayHoldSsn, keyClass, keyWords, maskSsnText, ssnFieldsOf, tokeniseSsnShapes, typeNamesSsn } from "../../../src/pii/ssn-key.js";
import { canonicalJson } from "../../../src/store/walk/canonical.js";

const HEX = "ab".repeat(32);

describe("the rule's branches", () => {
  it("classes: a name, masking's own keys, the halves of a typed pair, anything else", () => {
    expect(["taxId", "ssn_token", "ssnLast4", "ssn_last_4", "ID_TYPE", "idNumber", "token", "last4", "x_last_4", "firstName"].map(keyClass)).toEqual([
      "NAME", "TOKEN", "LAST4", "LAST4", "TYPE", "VALUE", "OTHER", "OTHER", "OTHER", "OTHER",
    ]);
    expect(keyClass("accessToken")).toBe("OTHER");
    expect(keyClass("ssn_4")).toBe("NAME");
    expect(keyClass(`[ssn:${HEX}]`)).toBe("OTHER");
    expect(keyClass("[ssn]")).toBe("OTHER");
    expect(keyWords("SS#")).toEqual(["ss", "number"]);
    expect(keyWords(`x[ssn:${HEX}]y`)).toEqual(["x", "y"]);
  });

  it("a type names an SSN as a key would, a short text only", () => {
    expect(typeNamesSsn("Social Security Number")).toBe(true);
    expect(typeNamesSsn("EIN")).toBe(false);
    expect(typeNamesSsn(7)).toBe(false);
    expect(typeNamesSsn(`ssn ${"x".repeat(60)}`)).toBe(true);
    expect(typeNamesSsn(`ssn ${"x".repeat(61)}`)).toBe(false);
  });

  it("masking's own keys hold more: a fifth digit; a digit in anything but 64 hex characters; an element of a list", () => {
    expect(holdsMore("LAST4", "1234")).toBe(false);
    expect(holdsMore("LAST4", "1-2-3-4-5")).toBe(true);
    expect(holdsMore("LAST4", 12345)).toBe(true);
    expect(holdsMore("LAST4", Number.NaN)).toBe(false);
    expect(holdsMore("LAST4", null)).toBe(false);
    expect(holdsMore("LAST4", ["1", ["123456"]])).toBe(true);
    expect(holdsMore("TOKEN", HEX)).toBe(false);
    expect(holdsMore("TOKEN", HEX.toUpperCase())).toBe(false);
    expect(holdsMore("TOKEN", `${HEX}0`)).toBe(true);
    expect(holdsMore("TOKEN", "abc")).toBe(false);
    expect(holdsMore("TOKEN", 0)).toBe(true);
    expect(holdsMore("TOKEN", { a: 1 })).toBe(false);
  });

  it("the fields of an object: a typed pair needs both halves, and a type that is text", () => {
    expect(ssnFieldsOf({ type: "SSN", label: "x" })).toEqual([]);
    expect(ssnFieldsOf({ value: "123456789" })).toEqual([]);
    expect(ssnFieldsOf({ type: 1, value: "1" })).toEqual([]);
    expect(ssnFieldsOf({ kind: "EIN", type: "TIN", value: "1", ssn: "2", ssn_last4: "12", ssn_token: "1" })).toEqual(["ssn", "ssn_token", "value"]);
  });

  it("the JSON-text look: each kind of key and value, and shapes", () => {
    expect(jsonMayHoldSsn('{"taxId":"1"}')).toBe(true);
    expect(jsonMayHoldSsn(`{"ssn_last4":"6789","ssn_token":"${HEX}","type":"EIN","name":"Ana"}`)).toBe(false);
    expect(jsonMayHoldSsn('{"ssn_last4":"12345"}')).toBe(true);
    expect(jsonMayHoldSsn('{"ssn_last4": 123456}')).toBe(true);
    expect(jsonMayHoldSsn('{"ssn_last4":null,"ssn_token":true}')).toBe(false);
    expect(jsonMayHoldSsn('{"ssn_last4":["1"]}')).toBe(true);
    expect(jsonMayHoldSsn('{"ssn_last4":"\\u0031"}')).toBe(true);
    expect(jsonMayHoldSsn('{"idType":"SS#"}')).toBe(true);
    expect(jsonMayHoldSsn('{"note":"re 123 45 6789"}')).toBe(true);
    expect(jsonMayHoldSsn('{"note":"re 2024-01-15"}')).toBe(false);
  });

  it("shapes in a text: tokenised with a token, [ssn] without; none, the same string", () => {
    expect(tokeniseSsnShapes("a 123-45-6789 b", (d) => `T${d}`)).toBe("a [ssn:T123456789] b");
    expect(tokeniseSsnShapes("a 123 45 6789 b")).toBe("a [ssn] b");
    const s = "no shape 2024-01-15";
    expect(tokeniseSsnShapes(s)).toBe(s);
  });

  it("messages: the new stems and separators, masking's own output left alone", () => {
    expect(maskSsnText("SS#: 12 TIN=34 nationalId: '5'")).toBe("SS#: [ssn] TIN=[ssn] nationalId: '[ssn]'");
    expect(maskSsnText("a 123\u00a045\u20136789 b")).toBe("a [ssn] b");
    expect(maskSsnText(`x [ssn:${HEX}] [ssn=6]`)).toBe(`x [ssn:${HEX}] [ssn=[ssn]]`);
    expect(maskSsnText('"ssn_last4":"6789" "ssn_last4":"56789"')).toBe('"ssn_last4":"6789" "ssn_last4":"[ssn]"');
  });
});

describe("the canonical writer's SSN options", () => {
  const fake = Object.assign((v: unknown) => [`L${String(v)}`, `T${String(v)}`] as const, { text: (s: string) => tokeniseSsnShapes(s, () => "t") });

  it("a shape in a key is written and sorted as its tokenised form; ids and the extra field are left; shapes: false looks at no string", () => {
    expect(canonicalJson({ b: 1, "123-45-6789": 2 }, { maskSsn: fake })).toBe('{"[ssn:t]":2,"b":1}');
    expect(canonicalJson({ id: "123-45-6789", n: "123-45-6789" }, { maskSsn: fake, ids: ["id"] })).toBe('{"id":"123-45-6789","n":"[ssn:t]"}');
    expect(canonicalJson({ id: "c1" }, { maskSsn: fake, extra: ["memberId", "123-45-6789"] })).toBe('{"id":"c1","memberId":"123-45-6789"}');
    expect(canonicalJson({ n: "123-45-6789", ssn: "1" }, { maskSsn: fake, shapes: false })).toBe('{"n":"123-45-6789","ssn_last4":"L1","ssn_token":"T1"}');
    expect(canonicalJson("123-45-6789", { maskSsn: fake })).toBe('"[ssn:t]"');
    expect(canonicalJson({ n: ["123-45-6789", 1] }, { maskSsn: fake })).toBe('{"n":["[ssn:t]",1]}');
    // Without `text` (a masker that does not tokenise), shapes are left.
    expect(canonicalJson({ n: "123-45-6789" }, { maskSsn: (v) => [v, v] })).toBe('{"n":"123-45-6789"}');
    // What masking writes wins over a served key of that name, even one that is itself an SSN.
    expect(canonicalJson({ ssn: "1", ssn_token: "9" }, { maskSsn: fake })).toBe('{"ssn_last4":"L1","ssn_token":"T1","ssn_token_last4":"L9","ssn_token_token":"T9"}');
  });
});

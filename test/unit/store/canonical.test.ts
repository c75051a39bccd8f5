import { describe, expect, it } from "vitest";
import { canonicalJson } from "../../../src/store/walk/canonical.js";

/** The stored form of a record, against texts written out by hand (never another call of it). */
const fakeMasker = (ssn: unknown) => [`L(${String(ssn)})`, `T(${String(ssn)})`] as const;

describe("canonicalJson", () => {
  it("sorts every object's keys at any depth, keeps list order, drops undefined, writes no whitespace", () => {
    expect(canonicalJson({ b: 1, a: { d: [3, { y: 1, x: 2 }, 1], c: null }, e: undefined })).toBe('{"a":{"c":null,"d":[3,{"x":2,"y":1},1]},"b":1}');
    expect(canonicalJson([{ b: "x y", a: true }])).toBe('[{"a":true,"b":"x y"}]');
    expect(canonicalJson("text")).toBe('"text"');
    expect(canonicalJson(undefined)).toBe("null");
  });

  it("omits the named field at the top only, and adds the extra one (over one the record already has)", () => {
    expect(canonicalJson({ id: "g1", plans: [1], x: { plans: 2 } }, { omit: "plans" })).toBe('{"id":"g1","x":{"plans":2}}');
    expect(canonicalJson({ name: "A", id: "p1" }, { extra: ["groupPolicyId", "gp1"] })).toBe('{"groupPolicyId":"gp1","id":"p1","name":"A"}');
    expect(canonicalJson({ id: "p1", groupPolicyId: "other" }, { extra: ["groupPolicyId", "gp1"] })).toBe('{"groupPolicyId":"gp1","id":"p1"}');
  });

  it("replaces each SSN field, at any depth and in lists, by what the masker gives; a served `_token` cannot stand in for it", () => {
    expect(canonicalJson({ ssn: "1", id: "m1" }, { maskSsn: fakeMasker })).toBe('{"id":"m1","ssn_last4":"L(1)","ssn_token":"T(1)"}');
    expect(canonicalJson({ deps: [{ dependentSsn: "2", name: "k" }] }, { maskSsn: fakeMasker })).toBe('{"deps":[{"dependentSsn_last4":"L(2)","dependentSsn_token":"T(2)","name":"k"}]}');
    expect(canonicalJson({ ssn: "3", ssn_token: "forged" }, { maskSsn: fakeMasker })).toBe('{"ssn_last4":"L(3)","ssn_token":"T(3)"}');
    // Without a masker nothing is replaced (the sandbox's and the analysts' own forms).
    expect(canonicalJson({ ssn: "4" })).toBe('{"ssn":"4"}');
  });

  it("keeps a record's field named \"\" (the empty key sorts first), once, beside its others", () => {
    expect(canonicalJson({ b: 2, "": 1, a: 3 })).toBe('{"":1,"a":3,"b":2}');
    expect(canonicalJson({ x: { "": null } })).toBe('{"x":{"":null}}');
    expect(canonicalJson({ "": "only" }, { maskSsn: fakeMasker })).toBe('{"":"only"}');
  });
});

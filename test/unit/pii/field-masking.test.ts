/**
 * The new-fields scanner asks the SSN rule once per new path what it made of the field, so that
 * the notice says a new field was masked. Keys the rule names today, at the top and below a known
 * object; a key it does not name; and a run in `--pii keep`, whose snapshot keeps the field as sent.
 */
import { describe, expect, it } from "vitest";
import { maskedAs } from "../../../src/store/walk/field-masking.js";
import { FieldScanner } from "../../../src/store/walk/field-paths.js";

describe("maskedAs", () => {
  it.each(["socialSecurityNumber", "spouseSSN", "ssn_number", "memberSSNs"])("%s is masked by its name", (k) => {
    expect(maskedAs(k, "123-45-6789", { [k]: "123-45-6789" })).toBe("name");
    expect(maskedAs(k, null)).toBe("name");
  });
  it.each([
    ["preferredLanguage", "en"],
    ["priorAuthNumber", "PA-1"],
    ["benefitsContact", { name: "Pat" }],
    ["ssn_token", "a".repeat(64)],
  ])("%s is not masked", (k, v) => expect(maskedAs(k, v, { [k]: v })).toBeUndefined());
});

describe("FieldScanner's marker", () => {
  const member = { id: "m1", preferredLanguage: "en", socialSecurityNumber: "123-45-6789", address: { city: "Springfield", socialSecurityNumber: "123-45-6789" } };

  it("names what the rule masked, once per path", () => {
    const s = new FieldScanner();
    s.scan("members", member);
    s.scan("members", { ...member, id: "m2" });
    expect(s.drain()).toEqual([
      { resource: "members", path: "preferredLanguage" },
      { resource: "members", path: "socialSecurityNumber", masked: "name" },
      { resource: "members", path: "address.socialSecurityNumber", masked: "name" },
    ]);
  });

  it("gives none when the snapshot keeps fields as sent (--pii keep)", () => {
    const s = new FieldScanner({ masking: false });
    s.scan("members", member);
    expect(s.drain().filter((f) => f.masked !== undefined)).toEqual([]);
  });
});

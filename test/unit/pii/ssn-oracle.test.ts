import { describe, expect, it } from "vitest";
import { expectedMasked, expectedSsnToken, holdsSsn, namesSsn, ssnLikeIn, ssnsIn } from "../../helpers/ssn-oracle.js";

/**
 * The test oracle of issue 38 (test/helpers/ssn-oracle.ts) held to the contract's own lists and
 * examples, so that the oracle the e2e and the integration tests judge the product by is itself
 * checked. Nothing of the product is imported: these pass on main as on the branch.
 */
const KEY = Buffer.from("test-pii-key-0123456789abcdef");
// printf 123456789 | openssl dgst -sha256 -hmac test-pii-key-0123456789abcdef
const T = "173c6441373cab191822c2d02975928c1eb7fa532f0eb8c782ce5e293dd0bf3b";

describe("the PHI oracle", () => {
  it("tokenises the digits with HMAC-SHA256 under the key (the openssl vector), whatever the separators", () => {
    for (const s of ["123456789", "123-45-6789", "123 45 6789", "123\u00a045\u20136789"]) expect(expectedSsnToken(s, KEY), s).toBe(T);
  });

  it("names the contract's keys, in any case and separator style, and not its non-names", () => {
    const names = [
      "ssn", "SSN", "dependentSsn", "memberSSNs", "ssn2", "SSNumber", "ssno", "SS#", "SS-No", "ss_nbr", "socialSecurityNumber", "SOCIAL_SECURITY_NUMBER",
      "socialsecuritynumber", "socSecNum", "Soc.Sec.#", "tin", "TIN", "tins", "itin", "ITIN", "taxpayerId", "taxpayer_number", "taxId", "tax_id",
      "TaxID", "taxid", "federalTaxId", "taxIdentificationNumber", "tax-no", "nationalId", "national_identifier", "NationalIDNumber", "nationalid",
    ];
    const nonNames = [
      "settings", "destination", "tint", "itinerary", "taxAmount", "salesTax", "taxonomyCode", "nationality", "nationalProviderId",
      "internationalId", "ein", "fein", "npi", "zip", "claimNumber", "routingNumber", "id", "classname", "lesson", "assnId", "ssn_token", "taxId_last4",
    ];
    for (const k of names) expect(namesSsn(k), k).toBe(true);
    for (const k of nonNames) expect(namesSsn(k), k).toBe(false);
  });

  it("leaves a masked form alone unless its value says otherwise", () => {
    expect(holdsSsn("ssn_token", "a".repeat(64))).toBe(false);
    expect(holdsSsn("ssn_token", null)).toBe(false);
    expect(holdsSsn("ssn_token", "123456789")).toBe(true);
    expect(holdsSsn("ssnLast4", "6789")).toBe(false);
    expect(holdsSsn("ssnLast4", "123456789")).toBe(true);
    expect(holdsSsn("taxId_last_4", 123456789)).toBe(true);
    expect(holdsSsn("cardLast4", "4111111111111111")).toBe(false);
  });

  it("computes the masked record: names, masked forms holding more, typed pairs and shapes in text, keys and lists", () => {
    const got = expectedMasked(
      {
        id: "m1",
        "SS#": "123-45-6789",
        ssnLast4: "123456789",
        ssn_token: "123456789",
        governmentIds: [{ type: "SSN", value: "123-45-6789" }, { type: "passport", value: "X1" }],
        identifiers: [{ kind: "national_id", number: 123456789 }],
        doc: { name: "Social Security Number", identifier: "" },
        notes: ["ok", "SSN 123 45 6789", "on 2024-01-15 call +12015551234 re 12-3456789 and 62701-1234 or 627011234"],
        lookup: { "123\u201345-6789": "primary" },
        nationality: "US",
      },
      KEY,
    );
    expect(got).toEqual({
      id: "m1",
      "SS#_last4": "6789",
      "SS#_token": T,
      ssnLast4_last4: "6789",
      ssnLast4_token: T,
      ssn_token_last4: "6789",
      ssn_token_token: T,
      governmentIds: [{ type: "SSN", value_last4: "6789", value_token: T }, { type: "passport", value: "X1" }],
      identifiers: [{ kind: "national_id", number_last4: "6789", number_token: T }],
      doc: { name: "Social Security Number", identifier_last4: null, identifier_token: null },
      notes: ["ok", `SSN [ssn:${T}]`, "on 2024-01-15 call +12015551234 re 12-3456789 and 62701-1234 or 627011234"],
      lookup: { [`[ssn:${T}]`]: "primary" },
      nationality: "US",
    });
  });

  it("finds the SSNs a record holds, with where, and SSN-like groups in any output text", () => {
    const found = ssnsIn({ a: { taxId: "111-22-3333" }, b: ["x 444 55 6666"], c: { "777-88-9999": 1 }, d: [{ scheme: "TIN", no: 123456789 }], zip: "627011234" });
    expect([...found]).toEqual([["111223333", "a.taxId"], ["444556666", "b[0] (in text)"], ["777889999", "c.777-88-9999 (in a key)"], ["123456789", "d[0].no"]]);
    expect(ssnLikeIn('x"111-22-3333" 444\u00a055\u22126666 a123456789 987654321.').map((m) => [m.digits, m.form])).toEqual([
      ["111223333", "dashed"],
      ["444556666", "NBSP/Unicode dash"],
      ["987654321", "digits only"],
    ]);
  });
});

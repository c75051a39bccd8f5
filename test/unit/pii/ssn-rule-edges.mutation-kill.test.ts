/**
 * The edges of the issue 38 rule that the mutation rerun of 2026-12-02 found untested (see
 * docs/mutation-testing.md): the plural stems, the word after `soc` and `tax`, `last 4` after a
 * word that names no SSN, a type that is no text, the raw-text look of the store's lazy path, the
 * scalar values of the JSON-text look, a value left open in a message, and what masking wrote in
 * a message when its token holds digits (real tokens do). Each expected value is written out by hand.
 */
import { describe, expect, it } from "vitest";
import { jsonMayHoldSsn, keyClass, maskSsnText, mayHoldSsnShape, ssnFieldsOf, typeNamesSsn } from "../../../src/pii/ssn-key.js";

// A token as masking writes it: 64 hex characters, digits among them.
const TOKEN = "0123456789abcdef".repeat(4);

describe("the rule's edges", () => {
  it("the plural stems name an SSN as the singular does: itins, taxids, nationalids", () => {
    expect(["itins", "taxids", "nationalids", "dependent_itins"].map(keyClass)).toEqual(["NAME", "NAME", "NAME", "NAME"]);
  });

  it("`soc` names an SSN only before `sec`, and only `soc` before it does; `tax` only before a whole id word", () => {
    expect(["socCode", "sslSec", "taxSec", "taxPaid", "national_grid"].map(keyClass)).toEqual(["OTHER", "OTHER", "OTHER", "OTHER", "OTHER"]);
    expect(["socSec", "tax_id"].map(keyClass)).toEqual(["NAME", "NAME"]);
  });

  it("`last 4` after words that name no SSN is no masking output and no SSN key", () => {
    expect(keyClass("tax_last_4")).toBe("OTHER");
    expect(keyClass("taxId_last_4")).toBe("LAST4");
  });

  it("a typed pair's type that is a list is no type", () => {
    expect(typeNamesSsn(["SSN"])).toBe(false);
    expect(ssnFieldsOf({ type: ["SSN"], value: "123456789" })).toEqual([]);
  });
});

describe("the raw-text look of the store's lazy path (mayHoldSsnShape)", () => {
  it("a shape at the start of a value masked whole (a name, masking's own keys) does not count; under any other key it does", () => {
    expect(mayHoldSsnShape('{"ssn":"123-45-6789"}')).toBe(false);
    expect(mayHoldSsnShape('{"ssn_last4":"123-45-6789"}')).toBe(false);
    expect(mayHoldSsnShape('{"ssn_token":"123-45-6789"}')).toBe(false);
    expect(mayHoldSsnShape('{"note":"123-45-6789"}')).toBe(true);
    expect(mayHoldSsnShape('{"type":"123-45-6789"}')).toBe(true);
    expect(mayHoldSsnShape('{"note":"no shape"}')).toBe(false);
  });
});

describe("the JSON-text look (jsonMayHoldSsn)", () => {
  it("a name holds an SSN whatever its value; a key that names none, or a pair's value half alone, does not", () => {
    expect(jsonMayHoldSsn('{"ssn":"redacted"}')).toBe(true);
    expect(jsonMayHoldSsn('{"taxAmount":12.5}')).toBe(false);
    // What masking wrote in a key is no word of it: the key is `no`, a pair's value half.
    expect(jsonMayHoldSsn('{"[ssn]no":"1"}')).toBe(false);
  });

  it("a shape that starts a value under any key counts", () => {
    expect(jsonMayHoldSsn('{"note":"123-45-6789"}')).toBe(true);
  });

  it("masking's own keys: a real token, false, a positive number with four digits or fewer, are what masking writes", () => {
    expect(jsonMayHoldSsn(`{"ssn_last4":"6789","ssn_token":"${TOKEN}"}`)).toBe(false);
    expect(jsonMayHoldSsn('{"ssn_last4":null,"ssn_token":false}')).toBe(false);
    expect(jsonMayHoldSsn('{"ssn_last4":1234}')).toBe(false);
    expect(jsonMayHoldSsn('{"ssn_last4":-1234}')).toBe(false);
    expect(jsonMayHoldSsn('{"ssn_last4":12345}')).toBe(true);
  });

  it("a value of masking's own keys with an escape in it is not read as far as the escaped quote: it may hold more", () => {
    expect(jsonMayHoldSsn('{"ssn_last4":"\\"12345"}')).toBe(true);
    expect(jsonMayHoldSsn('{"ssn_token":"\\"1"}')).toBe(true);
  });
});

describe("messages (maskSsnText)", () => {
  it("a value of masking's own keys left open at the end is judged whole", () => {
    expect(maskSsnText('"ssn_last4":"12345')).toBe('"ssn_last4":"[ssn]"');
    expect(maskSsnText('"ssn_last4":"1234')).toBe('"ssn_last4":"1234');
    expect(maskSsnText('"ssn_token":"1')).toBe('"ssn_token":"[ssn]"');
  });

  it("what masking wrote, a real token, is left; `ssn:` with anything else after `[`, or a token with no `[`, is masked", () => {
    expect(maskSsnText(`x [ssn:${TOKEN}] y`)).toBe(`x [ssn:${TOKEN}] y`);
    expect(maskSsnText("x [ssn:1] y")).toBe("x [ssn:[ssn]] y");
    expect(maskSsnText(`x ssn:${TOKEN}] y`)).toBe("x ssn:[ssn]] y");
  });
});

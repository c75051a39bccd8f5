/**
 * The SSN patterns of the one PII rule, one example per part of each pattern: a key's words, the
 * number words, a JSON key that may name an SSN, and in free text every way a value can be
 * written (quoted, single-quoted, escaped inside a JSON string, left open at the end, bare up to
 * each of its stops). Each expected text is written out by hand.
 */
import { describe, expect, it } from "vitest";
import { isSsnKey, jsonMayHoldSsn, keyWords, maskSsnText } from "../../../src/pii/ssn-key.js";

describe("SSN patterns, part by part", () => {
  it("a key's words: one capital before an s is no acronym's plural; an acronym's plural before a capital ends there", () => {
    expect(keyWords("pageBs")).toEqual(["page", "bs"]);
    expect(keyWords("SSNsId")).toEqual(["ssn", "id"]);
  });

  it("`ss` names an SSN only before a whole number word, not one that merely starts or ends like one", () => {
    expect(isSsnKey("ss_casino")).toBe(false);
    expect(isSsnKey("ss_nobody")).toBe(false);
    expect(isSsnKey("ss_no")).toBe(true);
  });

  it("only `last4` or `last 4` at the end is what masking wrote; `security` names an SSN only after `social`", () => {
    expect(isSsnKey("ssn_last_verified")).toBe(true);
    expect(isSsnKey("ssnLast4")).toBe(false);
    expect(isSsnKey("sslSecurityLevel")).toBe(false);
    expect(isSsnKey("socialSecurityLevel")).toBe(true);
  });

  it("jsonHasSsnKey: a key with more than one character after `social`, and a key spaced from its colon", () => {
    expect(jsonMayHoldSsn('{"socialSecurityNumber":"1"}')).toBe(true);
    expect(jsonMayHoldSsn('{"ssn" : "1"}')).toBe(true);
  });

  it("the key: any word characters and dashes around `ss`/`social`, in any case, after any separator", () => {
    expect(maskSsnText("dependent_ssn=12 spouse-ssn: 34")).toBe("dependent_ssn=[ssn] spouse-ssn: [ssn]");
    expect(maskSsnText("SSN=12 Social_Security_No=34")).toBe("SSN=[ssn] Social_Security_No=[ssn]");
    expect(maskSsnText("x.ssn=12")).toBe("x.ssn=[ssn]");
    expect(maskSsnText("lesson=12 classname: 34 pass=56")).toBe("lesson=12 classname: 34 pass=56");
    // Masking's own keys stay while they hold what masking writes; more (a digit in a non-token, a fifth digit) is an SSN.
    expect(maskSsnText(`ssn_token=${"ab".repeat(32)} ssn_last4=1234`)).toBe(`ssn_token=${"ab".repeat(32)} ssn_last4=1234`);
    expect(maskSsnText("ssn_token=ab12 ssn_last4=12345")).toBe("ssn_token=[ssn] ssn_last4=[ssn]");
  });

  it("between key and value: a quote, spaces or tabs around `:` or `=`; without either it is no field", () => {
    expect(maskSsnText("'ssn': '12', x")).toBe("'ssn': '[ssn]', x");
    expect(maskSsnText("ssn = 12 and ssn\t:\t34")).toBe("ssn = [ssn] and ssn\t:\t[ssn]");
    expect(maskSsnText("ssn:12")).toBe("ssn:[ssn]");
    expect(maskSsnText("ssn 12")).toBe("ssn 12");
    expect(maskSsnText("ssn= a12")).toBe("ssn= [ssn]");
  });

  it("a value escaped inside a JSON string: up to its closing quote only, a lone backslash inside, or open to the end", () => {
    expect(maskSsnText('{\\"ssn\\":\\"12\\",\\"x\\":\\"y\\"}')).toBe('{\\"ssn\\":\\"[ssn]\\",\\"x\\":\\"y\\"}');
    expect(maskSsnText('{\\"ssn\\":\\"1\\n2\\",\\"x\\":\\"y\\"}')).toBe('{\\"ssn\\":\\"[ssn]\\",\\"x\\":\\"y\\"}');
    expect(maskSsnText('{\\"ssn\\":\\"123')).toBe('{\\"ssn\\":\\"[ssn]\\"');
  });

  it("a quoted value: an escaped quote inside, or left open (its quotes kept as they began)", () => {
    expect(maskSsnText('"ssn":"12\\"3", "a":"b"')).toBe('"ssn":"[ssn]", "a":"b"');
    expect(maskSsnText('"ssn":"123')).toBe('"ssn":"[ssn]"');
    expect(maskSsnText('"ssn":"ab\\"')).toBe('"ssn":"[ssn]"');
    expect(maskSsnText("ssn='1 2', x")).toBe("ssn='[ssn]', x");
    expect(maskSsnText("ssn='12")).toBe("ssn='[ssn]'");
  });

  it("a bare value: up to each of its stops, with spaced groups of digits, and only if it holds a digit", () => {
    expect(maskSsnText("ssn=ab1cd;x")).toBe("ssn=[ssn];x");
    expect(maskSsnText(`ssn=1,x ssn=2;x ssn=3&x (ssn=4) {ssn:5} [ssn=6] ssn=7"x ssn=8'x ssn=9 x`)).toBe(
      `ssn=[ssn],x ssn=[ssn];x ssn=[ssn]&x (ssn=[ssn]) {ssn:[ssn]} [ssn=[ssn]] ssn=[ssn]"x ssn=[ssn]'x ssn=[ssn] x`,
    );
    expect(maskSsnText("ssn: 123 45 6789 ok")).toBe("ssn: [ssn] ok");
    expect(maskSsnText("ssn: 12 ab")).toBe("ssn: [ssn] ab");
    expect(maskSsnText("ssn: 1-2 3-4 x")).toBe("ssn: [ssn] x");
    expect(maskSsnText("ssn: none")).toBe("ssn: none");
    expect(maskSsnText("id 1234567890123 ssn: 0")).toBe("id 1234567890123 ssn: [ssn]");
  });
});

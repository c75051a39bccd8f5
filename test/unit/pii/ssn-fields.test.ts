import { createHmac } from "node:crypto";
import { describe, expect, it } from "vitest";
import { redact } from "../../../src/errors.js";
import { withoutPlainSsn } from "../../../src/sinks/plain-ssn.js";
import { canonicalJson } from "../../../src/store/walk/canonical.js";
import { maskPii, ssnMasker } from "../../../src/store/pii/pii.js";

/**
 * Every place that decides "this field holds an SSN" decides it the same way: the store's two
 * maskers, the sinks' strip under `--pii keep` and the error texts. The record below carries SSNs
 * under keys named in other styles, at depth and inside lists.
 */
const KEY = Buffer.alloc(32, 7);
// Worked out here, not by the store: HMAC-SHA256 of the digits under the key.
const token = (digits: string) => createHmac("sha256", KEY).update(digits).digest("hex");
const SSNS = ["111-22-3331", "111-22-3332", "111-22-3333", "111-22-3334", "111-22-3335", "111-22-3336"];
const record = () => ({
  id: "m1",
  SSN: SSNS[0],
  lesson: "keep me",
  dependents: [{ name: "kid", dependentSsn: SSNS[1] }, { ssnNumber: 111223333 }],
  spouse: { socialSecurityNumber: SSNS[3], detail: { "SSN-No": SSNS[4] } },
  social_security_no: SSNS[5],
});

function assertNoPlain(text: string): void {
  for (const s of SSNS) {
    expect(text).not.toContain(s);
    expect(text).not.toContain(s.replace(/-/g, ""));
  }
}

describe("an SSN under any key name, at any depth", () => {
  it("the canonical writer tokenizes each into <key>_token and <key>_last4", () => {
    const json = canonicalJson(record(), { maskSsn: ssnMasker(KEY) });
    assertNoPlain(json);
    const v = JSON.parse(json);
    expect(v.SSN_last4).toBe("3331");
    expect(v.SSN_token).toBe(token("111223331"));
    expect(v.dependents[0].dependentSsn_last4).toBe("3332");
    expect(v.dependents[1].ssnNumber_last4).toBe("3333");
    expect(v.spouse.socialSecurityNumber_token).toBe(token("111223334"));
    expect(v.spouse.detail["SSN-No_last4"]).toBe("3335");
    expect(v.social_security_no_last4).toBe("3336");
    expect(v.lesson).toBe("keep me");
  });

  it("maskPii (the quarantine's excerpts) does the same", () => {
    const masked = maskPii(record(), KEY);
    assertNoPlain(JSON.stringify(masked));
    expect((masked as Record<string, unknown>).SSN_last4).toBe("3331");
    expect((masked as Record<string, unknown>).SSN_token).toBe(token("111223331"));
    expect(JSON.parse(canonicalJson(masked))).toEqual(JSON.parse(canonicalJson(record(), { maskSsn: ssnMasker(KEY) })));
  });

  it("the sinks drop each plain one under --pii keep, and keep what is not an SSN", () => {
    const out = withoutPlainSsn({ ...record(), ssn_token: "ab", ssn_last4: "3331" }) as Record<string, unknown>;
    assertNoPlain(JSON.stringify(out));
    expect(out).toMatchObject({ id: "m1", lesson: "keep me", ssn_token: "ab", ssn_last4: "3331", dependents: [{ name: "kid" }, {}] });
  });

  it("error texts mask the value of each such key, even one that does not look like an SSN", () => {
    for (const [text, secret] of [
      ['{"socialSecurityNumber":"12-3"}', "12-3"],
      ["ssnNumber=98-76 bad", "98-76"],
      ['{"SSN_No": "X1-22"}', "X1-22"],
      ['{"spouse":{"social_security_no":"4-5-6"}}', "4-5-6"],
    ] as const) {
      const out = redact(text);
      expect(out, text).not.toContain(secret);
      expect(out, text).toContain("[ssn]");
    }
    // A token as masking writes it (64 hex characters) stays; a `_token` key holding anything else with a digit is an SSN.
    const token = "ab".repeat(32);
    expect(redact(`{"lesson":"a1","ssn_token":"${token}"}`)).toBe(`{"lesson":"a1","ssn_token":"${token}"}`);
    expect(redact('{"lesson":"a1","ssn_token":"ab12"}')).toBe('{"lesson":"a1","ssn_token":"[ssn]"}');
  });
});

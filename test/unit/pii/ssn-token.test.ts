import { createHmac } from "node:crypto";
import { describe, expect, it } from "vitest";
import { canonicalJson } from "../../../src/store/walk/canonical.js";
import { maskPii, ssnMasker } from "../../../src/store/pii/pii.js";

/**
 * The SSN token is HMAC-SHA256 of the SSN's nine digits under the PII key. Each expected value is
 * worked out here with node:crypto (and one by `openssl dgst`), never by the store's own masker:
 * with an empty key, or a plain hash, nine digits are brute-forced in seconds.
 */
const KEY = Buffer.from("test-pii-key-0123456789abcdef");
const OTHER = Buffer.from("another-pii-key-0123456789abcde");
const hmac = (key: Buffer, digits: string) => createHmac("sha256", key).update(digits).digest("hex");

const stored = (record: unknown, key: Buffer) => JSON.parse(canonicalJson(record, { maskSsn: ssnMasker(key) })) as Record<string, unknown>;

describe("the SSN token", () => {
  it("is the HMAC-SHA256 of the digits under the PII key (a vector from `printf 123456789 | openssl dgst -sha256 -hmac KEY`)", () => {
    const expected = "173c6441373cab191822c2d02975928c1eb7fa532f0eb8c782ce5e293dd0bf3b";
    expect(hmac(KEY, "123456789")).toBe(expected);
    expect(stored({ id: "m1", ssn: "123-45-6789" }, KEY)).toEqual({ id: "m1", ssn_last4: "6789", ssn_token: expected });
    expect(maskPii({ id: "m1", ssn: "123-45-6789" }, KEY)).toEqual({ id: "m1", ssn_last4: "6789", ssn_token: expected });
  });

  it("dashed, spaced, undashed and numeric forms of one SSN give one token", () => {
    const want = hmac(KEY, "987654321");
    for (const ssn of ["987-65-4321", "987654321", "987 65 4321", 987654321]) {
      expect(stored({ ssn }, KEY).ssn_token, String(ssn)).toBe(want);
      expect((maskPii({ ssn }, KEY) as Record<string, unknown>).ssn_token, String(ssn)).toBe(want);
    }
  });

  it("a different key gives a different token, and neither is the token of an empty key or a plain hash", () => {
    const a = stored({ ssn: "123-45-6789" }, KEY).ssn_token;
    const b = stored({ ssn: "123-45-6789" }, OTHER).ssn_token;
    expect(b).toBe(hmac(OTHER, "123456789"));
    expect(a).not.toBe(b);
    for (const t of [a, b]) {
      expect(t).not.toBe(hmac(Buffer.alloc(0), "123456789"));
      expect(t).not.toBe("15e2b0d3c33891ebb0f1ef609ec419420c20e320ce94c65fbc8c3312448eb225"); // sha256("123456789")
    }
  });

  it("two SSNs under one key give two tokens; an empty SSN gives none", () => {
    expect(stored({ ssn: "123-45-6789" }, KEY).ssn_token).not.toBe(stored({ ssn: "123-45-6780" }, KEY).ssn_token);
    expect(stored({ ssn: "" }, KEY)).toEqual({ ssn_last4: null, ssn_token: null });
  });

  it("a key holding a list of SSNs gets a list of tokens and of last4s, one per element, in order (an empty or odd element: null)", () => {
    const want = { memberSSNs_last4: ["6789", "4321", null, null], memberSSNs_token: [hmac(KEY, "123456789"), hmac(KEY, "987654321"), null, null] };
    expect(stored({ memberSSNs: ["123-45-6789", 987654321, "", { x: 1 }] }, KEY)).toEqual(want);
    expect(maskPii({ memberSSNs: ["123-45-6789", 987654321, "", { x: 1 }] }, KEY)).toEqual(want);
    expect(stored({ memberSSNs: [] }, KEY)).toEqual({ memberSSNs_last4: [], memberSSNs_token: [] });
  });
});

/**
 * The simulation's own oracles, checked against values worked out outside this code base: the SSN
 * token against `openssl dgst -sha256 -hmac`, the key naming against the README's rule.
 */
import { describe, expect, it } from "vitest";
import { expectedMask, expectedMasked } from "./expected.js";
import { SIM_PII_KEY } from "./world.js";

// printf '%s' 123456789 | openssl dgst -sha256 -hmac "sim-pii-key-b6e1f0c2d3a4958677"
const OPENSSL_TOKEN = "accdcbcb37bb59b31fb581966b9a32cd0a96028ee708d3516114ba0da3535f1a";

describe("the simulation's expected masking", () => {
  it("tokenises the digits with HMAC-SHA256 under the key: dashed and undashed alike, another key another token", () => {
    expect(expectedMask("123-45-6789", SIM_PII_KEY)).toEqual(["6789", OPENSSL_TOKEN]);
    expect(expectedMask("123456789", SIM_PII_KEY)).toEqual(["6789", OPENSSL_TOKEN]);
    expect(expectedMask("123456789", Buffer.from("another key"))[1]).not.toBe(OPENSSL_TOKEN);
    expect(expectedMask("123456789", Buffer.alloc(0))[1]).not.toBe(OPENSSL_TOKEN);
    expect(expectedMask(["123-45-6789", ""], SIM_PII_KEY)).toEqual([["6789", null], [OPENSSL_TOKEN, null]]);
  });

  it("names <key>_token and <key>_last4 for the keys the model serves SSNs under, at any depth, and only those", () => {
    const got = expectedMasked({ ssn: "123-45-6789", spouse: [{ note: "x" }, { "SSN-No": "123456789" }], address: { zip: "71234" } }, SIM_PII_KEY);
    expect(got).toEqual({
      ssn_last4: "6789",
      ssn_token: OPENSSL_TOKEN,
      spouse: [{ note: "x" }, { "SSN-No_last4": "6789", "SSN-No_token": OPENSSL_TOKEN }],
      address: { zip: "71234" },
    });
  });
});

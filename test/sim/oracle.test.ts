/**
 * The simulation's own oracles, checked against values worked out outside this code base: the SSN
 * token against `openssl dgst -sha256 -hmac`, the key naming, the typed pairs and the SSNs in
 * free text against the README's rule (issue 38), and the `ssn` invariant's scan against each
 * way the model writes an SSN.
 */
import { describe, expect, it } from "vitest";
import { norm } from "../helpers/expected.js";
import { expectedMask, expectedMasked, expectedText } from "./expected.js";
import { expectedMasked as contractMasked } from "../helpers/ssn-oracle.js";
import { checkSsns } from "./invariants.js";
import { OpKinds, ServiceModel } from "./model.js";
import { TEXT_SEPARATORS } from "./phi-keys.js";
import { Rng } from "./rng.js";
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

  it("masks the other names, a typed pair whose type says SSN (text or number) and an SSN in free text; not the pairs and numbers that are no SSN", () => {
    const got = expectedMasked(
      {
        taxId: "123-45-6789",
        "SS#": "123456789",
        ssnLast4: "123456789",
        beneficiary: [{ identifiers: [{ kind: "TIN", number: 123456789 }, { type: "EIN", value: "12-3456789" }] }],
        notes: ["no answer", "call re 123\u00a045\u20136789"],
        processing: { denialReason: "SSN 123 45 6789 on file, see 2026-02-01" },
        phone: "555-0142",
        claimNumber: "CLM1234567",
      },
      SIM_PII_KEY,
    );
    expect(got).toEqual({
      taxId_last4: "6789",
      taxId_token: OPENSSL_TOKEN,
      "SS#_last4": "6789",
      "SS#_token": OPENSSL_TOKEN,
      ssnLast4_last4: "6789",
      ssnLast4_token: OPENSSL_TOKEN,
      beneficiary: [{ identifiers: [{ kind: "TIN", number_last4: "6789", number_token: OPENSSL_TOKEN }, { type: "EIN", value: "12-3456789" }] }],
      notes: ["no answer", `call re [ssn:${OPENSSL_TOKEN}]`],
      processing: { denialReason: `SSN [ssn:${OPENSSL_TOKEN}] on file, see 2026-02-01` },
      phone: "555-0142",
      claimNumber: "CLM1234567",
    });
    for (const a of TEXT_SEPARATORS) for (const b of TEXT_SEPARATORS) expect(expectedText(`x 123${a}45${b}6789.`, SIM_PII_KEY)).toBe(`x [ssn:${OPENSSL_TOKEN}].`);
    expect(expectedText("1123-45-6789 and 123-45-67890", SIM_PII_KEY)).toBe("1123-45-6789 and 123-45-67890");
  });

  it("the `ssn` invariant finds an SSN with any of the separators, or nine digits alone, and not inside a token", () => {
    for (const a of TEXT_SEPARATORS) {
      const v = checkSsns(["123-45-6789"], { files: [], texts: [{ where: "t", text: `note: 123${a}45${TEXT_SEPARATORS[9]}6789` }] });
      expect(v.map((x) => x.kind), JSON.stringify(a)).toEqual(["ssn"]);
    }
    expect(checkSsns(["123-45-6789"], { files: [], texts: [{ where: "t", text: '"x":123456789}' }] }).length).toBe(1);
    expect(checkSsns(["123-45-6789"], { files: [], texts: [{ where: "t", text: `[ssn:${OPENSSL_TOKEN}] a123456789 987-65-4321` }] })).toEqual([]);
  });

  it("agrees with the contract's oracle (test/helpers/ssn-oracle.ts) on every record the model serves, over days of operations", () => {
    const init = { designs: 3, groups: 4, members: 40, claims: 60, twoGroupPct: 20, pageSizes: { designs: 5, groups: 5, members: 5, claims: 5 } };
    const seen = { pairs: 0, notes: 0, denials: 0 };
    for (let seed = 1; seed <= 12; seed++) {
      const model = new ServiceModel(Rng.derive(seed, 1), init, Rng.derive(seed, 3));
      const ops = Rng.derive(seed, 7);
      for (let i = 0; i < 150; i++) model.apply({ kind: ops.pick(OpKinds), a: ops.int(1000), b: ops.int(1000), c: ops.int(1000) });
      const records = [...model.designs, ...model.groups, ...model.members.values(), ...model.claims.values()];
      for (const r of records) expect(norm(expectedMasked(r, SIM_PII_KEY)), JSON.stringify(r)).toEqual(norm(contractMasked(r, SIM_PII_KEY)));
      const text = JSON.stringify(records);
      seen.pairs += text.match(/"(type|kind|name|idType|scheme|id_type)":"(SSN|TIN|Social Security Number|national_id|SS#|taxId)"/g)?.length ?? 0;
      seen.notes += text.match(/"notes":/g)?.length ?? 0;
      seen.denials += text.match(/"denialReason":"[^"]*\d{3}[^"]*"/g)?.length ?? 0;
    }
    // The premise: the model does serve each of them.
    expect(seen.pairs).toBeGreaterThan(5);
    expect(seen.notes).toBeGreaterThan(5);
    expect(seen.denials).toBeGreaterThan(5);
  });
});

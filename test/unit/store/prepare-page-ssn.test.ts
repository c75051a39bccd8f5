import { createHmac } from "node:crypto";
import { describe, expect, it } from "vitest";
import { mayHoldSsnShape } from "../../../src/pii/ssn-key.js";
import { Encoder } from "../../../src/store/walk/prepare-page.js";

/**
 * The hot path of the SSN shape rule: the encoder looks at a record's raw text once (a few
 * `indexOf`s) and only then at its strings. A record's own id, and a child's parent key, are left
 * as they are; everything else with a shape is tokenised, in the parent and in its children, on
 * the encoding path and on the lazy one.
 */
const KEY = Buffer.alloc(32, 3);
const tok = (digits: string) => createHmac("sha256", KEY).update(digits).digest("hex");

describe("the encoder and SSN shapes", () => {
  it("tokenises a shape anywhere but the record's own id and a child's parent key", () => {
    const enc = new Encoder({ piiKey: KEY });
    const item = {
      id: "123-45-6789",
      ssn: "111-22-3333",
      notes: "re 987-65-4321",
      coverages: [{ id: "555-44-3333", note: "for 222 33 4444" }],
    };
    const page = enc.prepare("members", [item], [JSON.stringify(item)], true);
    const rec = page.records[0]!;
    expect(JSON.parse(rec.canonical!)).toEqual({ id: "123-45-6789", ssn_last4: "3333", ssn_token: tok("111223333"), notes: `re [ssn:${tok("987654321")}]` });
    expect(JSON.parse(rec.children![0]!.canonical)).toEqual({ id: "555-44-3333", memberId: "123-45-6789", note: `for [ssn:${tok("222334444")}]` });
  });

  it("on the lazy path too, and when the raw text escapes the separators", () => {
    const enc = new Encoder({ piiKey: KEY });
    const raw = '{"id":"m1","notes":"re 987\\u002d65\\u002d4321"}';
    const [lazy] = enc.prepareLazy("members", ["m1"], [raw]);
    const { record } = enc.materialize("members", lazy!);
    expect(JSON.parse(record!.canonical!)).toEqual({ id: "m1", notes: `re [ssn:${tok("987654321")}]`, });
  });

  it("the raw-text look: a shape only under a key masked whole does not count; any other, or an escaped digit, does", () => {
    expect(mayHoldSsnShape('{"id":"m1","ssn":"123-45-6789","dateOfBirth":"1990-01-02","zip":"62701-1234"}')).toBe(false);
    expect(mayHoldSsnShape('{"taxId" : "123-45-6789","ssnLast4":"123 45 6789"}')).toBe(false);
    expect(mayHoldSsnShape('{"ssn":"123-45-6789","note":"123-45-6789"}')).toBe(true);
    expect(mayHoldSsnShape('{"memberSSNs":["123-45-6789"]}')).toBe(true);
    expect(mayHoldSsnShape('{"x\\"ssn":"123-45-6789"}')).toBe(true);
    expect(mayHoldSsnShape('{"n":"x\\u0031"}')).toBe(true);
    expect(mayHoldSsnShape('{"n":"Zo\\u00eb"}')).toBe(false);
    expect(mayHoldSsnShape('{"n":"123\u00a045\u20136789"}')).toBe(true);
  });

  it("under --pii keep nothing is looked at: the record is stored as it came", () => {
    const enc = new Encoder({ piiKey: KEY, piiMode: "keep" });
    const item = { id: "m1", notes: "re 987-65-4321" };
    expect(enc.prepare("members", [item], undefined, true).records[0]!.canonical).toBe('{"id":"m1","notes":"re 987-65-4321"}');
  });
});

/**
 * The PII rule and canonical JSON, each asked directly: the SSN token computed here with
 * node:crypto under the key (never by the code under test), the stored JSON written out by hand,
 * masked free text written out by hand.
 */
import { createHmac } from "node:crypto";
import { chmodSync, mkdirSync, mkdtempSync, readFileSync, rmSync, statSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterEach, describe, expect, it } from "vitest";
import { PiiKeyError } from "../../../src/errors.js";
import { isSsnKey, jsonMayHoldSsn, keyWords, maskSsnText } from "../../../src/pii/ssn-key.js";
import { canonicalJson } from "../../../src/store/walk/canonical.js";
import { loadOrCreatePiiKey, maskPii, ssnMasker } from "../../../src/store/pii/pii.js";

const KEY = Buffer.from("a-key-for-the-mutation-tests-32b");
const hmac = (key: Buffer, text: string) => createHmac("sha256", key).update(text).digest("hex");

describe("the SSN token", () => {
  it("is HMAC-SHA256 of the digits under the PII key: dashed and bare alike, another key another token", () => {
    const expected = hmac(KEY, "123456789");
    expect(maskPii({ id: "m1", ssn: "123-45-6789" }, KEY)).toEqual({ id: "m1", ssn_last4: "6789", ssn_token: expected });
    expect(maskPii({ ssn: "123456789" }, KEY)).toEqual({ ssn_last4: "6789", ssn_token: expected });
    expect(maskPii({ ssn: 123456789 }, KEY)).toEqual({ ssn_last4: "6789", ssn_token: expected });
    const other = Buffer.from("another-key-for-the-mutation-tst");
    expect(maskPii({ ssn: "123-45-6789" }, other)).toEqual({ ssn_last4: "6789", ssn_token: hmac(other, "123456789") });
    expect(hmac(other, "123456789")).not.toBe(expected);
  });

  it("masks at any depth and inside lists, leaves other keys, and does not change its input", () => {
    const input = { id: "m1", n: 3, deps: [{ dependentSsn: "987-65-4321", name: "kid" }, "text", null], spouse: { socialSecurityNumber: "111-22-3333" } };
    const copy = structuredClone(input);
    expect(maskPii(input, KEY)).toEqual({
      id: "m1",
      n: 3,
      deps: [{ dependentSsn_last4: "4321", dependentSsn_token: hmac(KEY, "987654321"), name: "kid" }, "text", null],
      spouse: { socialSecurityNumber_last4: "3333", socialSecurityNumber_token: hmac(KEY, "111223333") },
    });
    expect(input).toEqual(copy);
    expect(maskPii([{ ssn: "1" }], KEY)).toEqual([{ ssn_last4: "1", ssn_token: hmac(KEY, "1") }]);
  });

  it("an empty SSN, or one that is neither text nor a finite number, leaves nulls; mode keep passes the record as is", () => {
    const m = ssnMasker(KEY);
    for (const v of ["", null, undefined, Number.NaN, Number.POSITIVE_INFINITY, { a: 1 }, true]) expect(m(v)).toEqual([null, null]);
    expect(m(["123456789", [null, "1"]])).toEqual([["6789", [null, "1"]], [hmac(KEY, "123456789"), [null, hmac(KEY, "1")]]]);
    const record = { ssn: "123-45-6789" };
    expect(maskPii(record, KEY, "keep")).toBe(record);
  });
});

describe("the PII key file", () => {
  let dir = "";
  afterEach(() => rmSync(dir, { recursive: true, force: true }));
  const fresh = () => (dir = mkdtempSync(join(tmpdir(), "bsync-piikey-")));

  it("a configured key is its UTF-8 bytes, with no file", () => {
    fresh();
    expect(loadOrCreatePiiKey(join(dir, "s.db"), "héllo")).toEqual({ key: Buffer.from([0x68, 0xc3, 0xa9, 0x6c, 0x6c, 0x6f]), created: false });
  });

  it("a new key is 32 random bytes written as 64 hex characters and a newline, mode 0600; read back the same", () => {
    fresh();
    const db = join(dir, "s.db");
    const made = loadOrCreatePiiKey(db, undefined);
    expect(made.created).toBe(true);
    expect(made.path).toBe(`${db}.pii-key`);
    expect(made.key.length).toBe(32);
    const text = readFileSync(`${db}.pii-key`, "utf8");
    expect(text).toMatch(/^[0-9a-f]{64}\n$/);
    expect(Buffer.from(text.trim(), "hex").equals(made.key)).toBe(true);
    expect(statSync(`${db}.pii-key`).mode & 0o777).toBe(0o600);
    expect(loadOrCreatePiiKey(db, undefined)).toEqual({ key: made.key, created: false, path: `${db}.pii-key` });
    expect(loadOrCreatePiiKey(join(dir, "t.db"), undefined).key.equals(made.key)).toBe(false);
  });

  it("a key file open to others, or not 64 hex characters, is refused with what is wrong, and left as it is", () => {
    fresh();
    const db = join(dir, "s.db");
    const path = `${db}.pii-key`;
    const refused = (content: string, mode = 0o600): string => {
      writeFileSync(path, content);
      chmodSync(path, mode);
      try {
        loadOrCreatePiiKey(db, undefined);
      } catch (e) {
        expect(e).toBeInstanceOf(PiiKeyError);
        expect(readFileSync(path, "utf8")).toBe(content);
        return (e as Error).message;
      }
      throw new Error("not refused");
    };
    const restore = "restore the key file from your backup; a new key would not match the ssn_token values already in the snapshot";
    expect(refused("a".repeat(64), 0o640)).toContain(`pii key: ${path} has mode 0640, open to group or others: run \`chmod 600 ${path}\` (and consider who may have read it)`);
    expect(refused("a".repeat(64), 0o604)).toContain("has mode 0604");
    expect(refused("")).toContain(`pii key: ${path} must hold exactly 64 hex characters (a 32-byte key), but it is empty: ${restore}`);
    expect(refused("abc123")).toContain(`pii key: ${path} must hold exactly 64 hex characters (a 32-byte key), but it holds 6 characters: ${restore}`);
    expect(refused("g".repeat(64))).toContain(`pii key: ${path} must hold exactly 64 hex characters (a 32-byte key), but it holds 64 characters, not all hex: ${restore}`);
    expect(refused("a".repeat(65))).toContain("it holds 65 characters:");
    expect(refused(` ${"A".repeat(64)}x`)).toContain("it holds 65 characters, not all hex");
    rmSync(path);
    mkdirSync(path);
    expect(() => loadOrCreatePiiKey(db, undefined)).toThrow(`pii key: ${path} is not a file: ${restore}`);
  });
});

describe("canonical JSON", () => {
  it("sorts every object's keys at any depth, keeps list order, drops undefined, keeps null", () => {
    expect(canonicalJson({ b: 1, a: { d: 2, c: 3 } })).toBe('{"a":{"c":3,"d":2},"b":1}');
    expect(canonicalJson([{ b: [{ z: 1, y: { x: 0, w: 0 } }], a: 2 }, 3])).toBe('[{"a":2,"b":[{"y":{"w":0,"x":0},"z":1}]},3]');
    expect(canonicalJson({ a: undefined, b: null, c: "" })).toBe('{"b":null,"c":""}');
    expect(canonicalJson(undefined)).toBe("null");
    expect(canonicalJson("x")).toBe('"x"');
    expect(canonicalJson(null)).toBe("null");
    expect(canonicalJson([null, { a: null, b: [null] }])).toBe('[null,{"a":null,"b":[null]}]');
  });

  it("omit leaves out a top-level field only; extra adds (or replaces) a top-level field only", () => {
    expect(canonicalJson({ plans: [1], x: { plans: 2 } }, { omit: "plans" })).toBe('{"x":{"plans":2}}');
    expect(canonicalJson({ b: 1, z: { q: 1 } }, { extra: ["groupId", "G1"] })).toBe('{"b":1,"groupId":"G1","z":{"q":1}}');
    expect(canonicalJson({ groupId: "X", a: 1 }, { extra: ["groupId", "G1"] })).toBe('{"a":1,"groupId":"G1"}');
  });

  it("masks every SSN key at any depth with the masker given, in key order, the masked value winning", () => {
    const mask = (v: unknown) => [`L${String(v)}`, `T${String(v)}`] as const;
    expect(canonicalJson({ ssn: "1", name: "n" }, { maskSsn: mask })).toBe('{"name":"n","ssn_last4":"L1","ssn_token":"T1"}');
    expect(canonicalJson({ ssn: "1", ssn_token: "old" }, { maskSsn: mask })).toBe('{"ssn_last4":"L1","ssn_token":"T1"}');
    expect(canonicalJson({ deps: [{ dependentSsn: "2" }], s: { SSN: "3" } }, { maskSsn: mask })).toBe(
      '{"deps":[{"dependentSsn_last4":"L2","dependentSsn_token":"T2"}],"s":{"SSN_last4":"L3","SSN_token":"T3"}}',
    );
    expect(canonicalJson({ ssn: "1" })).toBe('{"ssn":"1"}');
    expect(canonicalJson({ ssn: "", lesson: "x" }, { maskSsn: () => [null, null] })).toBe('{"lesson":"x","ssn_last4":null,"ssn_token":null}');
  });
});

describe("SSNs in keys and free text", () => {
  it("splits a key into its words at separators and case changes", () => {
    expect(keyWords("memberSSNs")).toEqual(["member", "ssn"]);
    expect(keyWords("SSNumber")).toEqual(["ss", "number"]);
    expect(keyWords("SSN-No")).toEqual(["ssn", "no"]);
    expect(keyWords("ssn2_last4")).toEqual(["ssn2", "last4"]);
    expect(keyWords("__a__b__")).toEqual(["a", "b"]);
  });

  it("a key whose last words are `last 4` is masking's output; `ss` with a number word names an SSN", () => {
    expect(isSsnKey("ssn_last_4")).toBe(false);
    expect(isSsnKey("ssn_4")).toBe(true);
    expect(isSsnKey("ss_nbr")).toBe(true);
    expect(isSsnKey("ss_num")).toBe(true);
    expect(isSsnKey("ss_name")).toBe(false);
    expect(isSsnKey("social")).toBe(false);
    // Rule 3 (issue 38): one word `socialsecurity…`, and any word starting `ssn`, name an SSN.
    expect(isSsnKey("socialsecurity")).toBe(true);
    expect(isSsnKey("ssn3x")).toBe(true);
  });

  it("jsonMayHoldSsn finds an SSN key at any depth, not in values", () => {
    expect(jsonMayHoldSsn('{"a":{"b":[{"dependentSsn":"1"}]}}')).toBe(true);
    expect(jsonMayHoldSsn('{"ssn_token":"x","ssn_last4":"1","lesson":"ssn"}')).toBe(false);
    expect(jsonMayHoldSsn('{"note":"ssn: 1"}')).toBe(false);
    // Asked twice: a global pattern must start again at the beginning.
    expect(jsonMayHoldSsn('{"x":1,"ssn":"1"}')).toBe(true);
    expect(jsonMayHoldSsn('{"ssn":"1"}')).toBe(true);
  });

  it("maskSsnText masks SSN values and nine-digit runs, and nothing else", () => {
    expect(maskSsnText('GET /v1/members/123456789 {"dependentSsn":"12-3"}')).toBe('GET /v1/members/[ssn] {"dependentSsn":"[ssn]"}');
    expect(maskSsnText("a 123-45-6789 b 123 45 6789 c 1234567890 d 12345678")).toBe("a [ssn] b [ssn] c 1234567890 d 12345678");
    expect(maskSsnText("ssn=12a, lesson=1234")).toBe("ssn=[ssn], lesson=1234");
    expect(maskSsnText("ssn: expected 9 digits")).toBe("ssn: expected 9 digits");
    expect(maskSsnText("socialSecurityNumber: '111 22'")).toBe("socialSecurityNumber: '[ssn]'");
    expect(maskSsnText('{\\"ssn\\":\\"12\\"}')).toBe('{\\"ssn\\":\\"[ssn]\\"}');
    expect(maskSsnText("no digits here")).toBe("no digits here");
  });
});

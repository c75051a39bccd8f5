/**
 * The signature check against the public vectors (webhook-vectors.md: RFC 4231 and GitHub's
 * documentation, the digests typed from there, not computed here) in every accepted form, and
 * 10,000 generated mutations of signatures and bodies, every one rejected without an exception.
 */
import fc from "fast-check";
import { describe, expect, it } from "vitest";
import { checkSecrets, parseSignature, SignatureVerifier } from "../../../src/webhooks/verify.js";

const VECTORS = [
  { name: "GitHub", key: Buffer.from("It's a Secret to Everybody"), body: Buffer.from("Hello, World!"), hex: "757107ea0eb2509fc211221cce984b8a37570b6d7586c22c46f4379c8b043e17" },
  { name: "RFC 4231 case 1", key: Buffer.alloc(20, 0x0b), body: Buffer.from("Hi There"), hex: "b0344c61d8db38535ca8afceaf0bf12b881dc200c9833da726e9376c2e32cff7" },
  { name: "RFC 4231 case 2", key: Buffer.from("Jefe"), body: Buffer.from("what do ya want for nothing?"), hex: "5bdcc146bf60754e6a042426089575c75a003f089d2739839dec58b964ec3843" },
  { name: "RFC 4231 case 3", key: Buffer.alloc(20, 0xaa), body: Buffer.alloc(50, 0xdd), hex: "773ea91e36800e46854db8ebd09181a72959098b3ef8c122d9635514ced565fe" },
  { name: "RFC 4231 case 6", key: Buffer.alloc(131, 0xaa), body: Buffer.from("Test Using Larger Than Block-Size Key - Hash Key First"), hex: "60e431591ee0b67f0d8a26aacbf5b77f8e0bc6213728c5140546040f0ee37f54" },
];

/** The six forms the receiver accepts for one digest. */
const forms = (hex: string) => {
  const b64 = Buffer.from(hex, "hex").toString("base64");
  const bare = [hex.toLowerCase(), hex.toUpperCase(), b64];
  return [...bare, ...bare.map((s) => `sha256=${s}`)];
};

describe("X-Service-Signature against the public vectors", () => {
  it("GitHub's base64 form is the one the document prints", () => {
    expect(forms(VECTORS[0]!.hex)[2]).toBe("dXEH6g6yUJ/CESIczphLijdXC211hsIsRvQ3nIsEPhc=");
  });

  for (const v of VECTORS) {
    it.each(forms(v.hex))(`${v.name}: accepts %s`, (header) => {
      expect(new SignatureVerifier([v.key]).check(v.body, header)).toEqual({ ok: true, secretIndex: 0 });
    });
  }

  it("tries every secret of a rotation and says which one matched", () => {
    const [a, b] = [VECTORS[1]!, VECTORS[2]!];
    const v = new SignatureVerifier([a.key, b.key]);
    expect(v.check(b.body, b.hex)).toEqual({ ok: true, secretIndex: 1 });
    expect(v.check(a.body, a.hex)).toEqual({ ok: true, secretIndex: 0 });
    expect(v.check(a.body, b.hex)).toEqual({ ok: false, reason: "bad_signature" });
  });

  it("tells a missing header from a bad one, and refuses a header sent twice", () => {
    const g = VECTORS[0]!;
    const v = new SignatureVerifier([g.key]);
    expect(v.check(g.body, undefined)).toEqual({ ok: false, reason: "missing_signature" });
    expect(v.check(g.body, "")).toEqual({ ok: false, reason: "missing_signature" });
    expect(v.check(g.body, [g.hex, g.hex])).toEqual({ ok: false, reason: "bad_signature" });
  });

  it("rejects what Node's lenient decoders would shorten or skip", () => {
    const g = VECTORS[0]!;
    const b64 = Buffer.from(g.hex, "hex").toString("base64");
    // "...Phd=" decodes to the same 32 bytes as "...Phc=" (only the unused low bits differ): one digest, one spelling.
    expect(b64.endsWith("Phc=")).toBe(true);
    const aliased = `${b64.slice(0, 42)}d=`;
    expect(Buffer.from(aliased, "base64").equals(Buffer.from(g.hex, "hex"))).toBe(true);
    expect(new SignatureVerifier([g.key]).check(g.body, aliased)).toEqual({ ok: false, reason: "bad_signature" });
    for (const bad of [`${g.hex.slice(0, 62)}zz`, `${b64.slice(0, 20)}!${b64.slice(21)}`, `${b64.slice(0, 42)}F=`, aliased, "abzz", `sha256=sha256=${g.hex}`]) {
      expect(parseSignature(bad), bad).toBeNull();
    }
  });
});

/** The mutations, each a (header, body) pair that must be rejected. */
const HEX_CHARS = "0123456789abcdefABCDEF";
const B64_CHARS = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/";
const vector = fc.constantFrom(...VECTORS);
const encode = (digest: Buffer, how: number) => {
  const s = [digest.toString("hex"), digest.toString("hex").toUpperCase(), digest.toString("base64")][how % 3]!;
  return how >= 3 ? `sha256=${s}` : s;
};
const how = fc.integer({ min: 0, max: 5 });
const whitespace = fc.constantFrom(" ", "\t", "\n", "\r", "\u00a0", "\u2003");

type Case = { key: Buffer; body: Buffer; header: string };

const mutations: Record<string, fc.Arbitrary<Case>> = {
  "a flipped bit of the digest": fc.tuple(vector, how, fc.nat(255)).map(([v, h, bit]) => {
    const d = Buffer.from(v.hex, "hex");
    d[bit >> 3]! ^= 1 << (bit & 7);
    return { key: v.key, body: v.body, header: encode(d, h) };
  }),
  "a flipped bit of the body": fc.tuple(vector, how, fc.nat()).map(([v, h, n]) => {
    const body = Buffer.from(v.body);
    const bit = n % (body.length * 8);
    body[bit >> 3]! ^= 1 << (bit & 7);
    return { key: v.key, body, header: encode(Buffer.from(v.hex, "hex"), h) };
  }),
  "a truncated header": fc.tuple(vector, how, fc.nat()).map(([v, h, n]) => {
    const s = encode(Buffer.from(v.hex, "hex"), h);
    return { key: v.key, body: v.body, header: s.slice(0, n % s.length) };
  }),
  "a truncated or extended body": fc.tuple(vector, how, fc.nat(), fc.uint8Array({ minLength: 1, maxLength: 4 })).map(([v, h, n, extra]) => ({
    key: v.key,
    body: n % 2 === 0 ? v.body.subarray(0, n % v.body.length) : Buffer.concat([v.body, extra]),
    header: encode(Buffer.from(v.hex, "hex"), h),
  })),
  "a character outside the alphabet": fc.tuple(vector, how, fc.nat(), fc.string({ minLength: 1, maxLength: 1, unit: "binary" })).map(([v, h, n, c]) => {
    const s = encode(Buffer.from(v.hex, "hex"), h);
    const start = s.startsWith("sha256=") ? 7 : 0;
    const alphabet = h % 3 === 2 ? B64_CHARS : HEX_CHARS;
    const bad = alphabet.includes(c) || c === "=" ? "!" : c;
    const at = start + (n % (s.length - start - (h % 3 === 2 ? 1 : 0)));
    return { key: v.key, body: v.body, header: s.slice(0, at) + bad + s.slice(at + 1) };
  }),
  "whitespace around or inside": fc.tuple(vector, how, fc.nat(), whitespace).map(([v, h, n, w]) => {
    const s = encode(Buffer.from(v.hex, "hex"), h);
    const at = n % (s.length + 1);
    return { key: v.key, body: v.body, header: s.slice(0, at) + w + s.slice(at) };
  }),
  "bad base64 padding": fc.tuple(vector, fc.boolean(), fc.constantFrom("none", "double", "inside", "url-safe")).map(([v, prefix, pad]) => {
    const b = Buffer.from(v.hex, "hex").toString("base64");
    const body43 = b.slice(0, 43);
    const header =
      pad === "none" ? body43 : pad === "double" ? `${body43}==` : pad === "inside" ? `${body43.slice(0, 20)}=${body43.slice(20)}` : b.replace(/\+/g, "-").replace(/\//g, "_").replace(/=$/, "") + (b.includes("+") || b.includes("/") ? "=" : "");
    return { key: v.key, body: v.body, header: prefix ? `sha256=${header}` : header };
  }),
  "base64 with the last character's unused bits set (the same 32 bytes, another spelling)": fc.tuple(vector, fc.boolean(), fc.integer({ min: 1, max: 3 })).map(([v, prefix, bits]) => {
    const b = Buffer.from(v.hex, "hex").toString("base64");
    const last = B64_CHARS[B64_CHARS.indexOf(b[42]!) | bits]!;
    const header = `${b.slice(0, 42)}${last}=`;
    return { key: v.key, body: v.body, header: prefix ? `sha256=${header}` : header };
  }),
  "a 31- or 33-byte digest": fc.tuple(vector, how, fc.boolean(), fc.nat(255)).map(([v, h, shorter, extra]) => {
    const d = Buffer.from(v.hex, "hex");
    const digest = shorter ? d.subarray(0, 31) : Buffer.concat([d, Buffer.from([extra])]);
    const s = [digest.toString("hex"), digest.toString("hex").toUpperCase(), digest.toString("base64")][h % 3]!;
    return { key: v.key, body: v.body, header: h >= 3 ? `sha256=${s}` : s };
  }),
  "a valid signature of another body": fc.tuple(vector, vector, how).filter(([a, b]) => a !== b).map(([a, b, h]) => ({ key: a.key, body: a.body, header: encode(Buffer.from(b.hex, "hex"), h) })),
  "another prefix": fc.tuple(vector, how, fc.constantFrom("SHA256=", "sha256:", "sha1=", "sha256 =", "=", "sha512=")).map(([v, h, p]) => ({
    key: v.key,
    body: v.body,
    header: p + encode(Buffer.from(v.hex, "hex"), h % 3),
  })),
};

describe("10,000 mutations of signatures and bodies: every one rejected, none throws", () => {
  const names = Object.keys(mutations);
  const runs = Math.ceil(10_000 / names.length);
  it.each(names)("%s", (name) => {
    fc.assert(
      fc.property(mutations[name]!, ({ key, body, header }) => {
        const check = new SignatureVerifier([key]).check(body, header);
        expect(check.ok, `${JSON.stringify(header)} over ${body.toString("hex")}`).toBe(false);
      }),
      { numRuns: runs, seed: 23 },
    );
  });

  it("an arbitrary header is accepted only when it is one of the six forms of the right digest", () => {
    const v = VECTORS[0]!;
    const valid = new Set(forms(v.hex));
    const verifier = new SignatureVerifier([v.key]);
    fc.assert(
      fc.property(fc.oneof(fc.string({ maxLength: 80 }), fc.string({ maxLength: 80, unit: "binary" }), fc.constantFrom(...valid)), (header) => {
        expect(verifier.check(v.body, header).ok).toBe(valid.has(header));
      }),
      { numRuns: 2_000, seed: 23 },
    );
  });
});

describe("secrets checked before the receiver starts", () => {
  it("refuses a short secret or one with a space, naming its position and never its value", () => {
    const err = (() => {
      try {
        checkSecrets(["a-good-secret-0123456789", "short-one", "has a space inside 012345"]);
      } catch (e) {
        return e as Error & { problems?: string[] };
      }
      return undefined;
    })();
    expect(err?.message).toMatch(/webhookSecrets\[1\].*at least 16 characters, got 9/);
    expect(err?.message).toMatch(/webhookSecrets\[2\].*space or a control character/);
    expect(err?.message).not.toContain("short-one");
    expect(err?.message).not.toContain("has a space");
    expect(() => checkSecrets(["a-good-secret-0123456789", "another-good-one-0123"])).not.toThrow();
  });
});

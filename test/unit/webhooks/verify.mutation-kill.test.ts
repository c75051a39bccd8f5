/**
 * The signature check's smaller rules, asked directly (the mutation run of 2026-11-26 left them
 * untested): the header's name as Node delivers it, string secrets as their UTF-8 bytes, the first
 * of two matching secrets reported, `sha256=` stripped only at the start, and the start-up check's
 * 16-character bar and secret position. Expected digests are typed from webhook-vectors.md or
 * computed here with node:crypto, never with the verifier's own functions.
 */
import { createHmac } from "node:crypto";
import { createServer, request, type IncomingHttpHeaders } from "node:http";
import type { AddressInfo } from "node:net";
import { describe, expect, it } from "vitest";
import { ConfigError } from "../../../src/errors.js";
import { checkSecrets, parseSignature, SIGNATURE_HEADER, SignatureVerifier } from "../../../src/webhooks/verify.js";

/** GitHub's documented vector (webhook-vectors.md). */
const GITHUB = {
  key: "It's a Secret to Everybody",
  body: Buffer.from("Hello, World!"),
  hex: "757107ea0eb2509fc211221cce984b8a37570b6d7586c22c46f4379c8b043e17",
  b64: "dXEH6g6yUJ/CESIczphLijdXC211hsIsRvQ3nIsEPhc=",
};

/** The headers an in-process HTTP server receives for one request sent with `headers`. */
async function receivedHeaders(headers: Record<string, string>): Promise<IncomingHttpHeaders> {
  let seen: IncomingHttpHeaders | undefined;
  const server = createServer((req, res) => {
    seen = req.headers;
    res.end();
  });
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  try {
    const { port } = server.address() as AddressInfo;
    await new Promise<void>((resolve, reject) => {
      const req = request({ host: "127.0.0.1", port, method: "POST", headers }, (res) => {
        res.resume();
        res.on("end", resolve);
      });
      req.on("error", reject);
      req.end("{}");
    });
  } finally {
    await new Promise((resolve) => server.close(resolve));
  }
  return seen!;
}

describe("the signature header and secrets", () => {
  it("the header the sender names X-Service-Signature is the one read from Node's request", async () => {
    const headers = await receivedHeaders({ "X-Service-Signature": `sha256=${GITHUB.hex}` });
    expect(headers[SIGNATURE_HEADER]).toBe(`sha256=${GITHUB.hex}`);
  });

  it("a string secret is its UTF-8 bytes", () => {
    expect(new SignatureVerifier([GITHUB.key]).check(GITHUB.body, GITHUB.hex)).toEqual({ ok: true, secretIndex: 0 });
    // Outside ASCII, UTF-8 and Latin-1 give other keys: only the UTF-8 digest is accepted.
    const secret = "clé-secrète-ünïcode-2026";
    const utf8 = createHmac("sha256", Buffer.from(secret, "utf8")).update(GITHUB.body).digest("hex");
    const latin1 = createHmac("sha256", Buffer.from(secret, "latin1")).update(GITHUB.body).digest("hex");
    expect(utf8).not.toBe(latin1);
    const v = new SignatureVerifier([secret]);
    expect(v.check(GITHUB.body, utf8)).toEqual({ ok: true, secretIndex: 0 });
    expect(v.check(GITHUB.body, latin1)).toEqual({ ok: false, reason: "bad_signature" });
  });

  it("a Buffer secret is copied: changing the caller's buffer later changes nothing", () => {
    const key = Buffer.from(GITHUB.key);
    const v = new SignatureVerifier([key]);
    key.fill(0);
    expect(v.check(GITHUB.body, GITHUB.b64)).toEqual({ ok: true, secretIndex: 0 });
  });

  it("when two secrets match (one secret listed twice), the first is reported", () => {
    expect(new SignatureVerifier([GITHUB.key, GITHUB.key]).check(GITHUB.body, GITHUB.hex)).toEqual({ ok: true, secretIndex: 0 });
    expect(new SignatureVerifier(["another-secret-0123456789", GITHUB.key, GITHUB.key]).check(GITHUB.body, GITHUB.b64)).toEqual({ ok: true, secretIndex: 1 });
  });

  it("`sha256=` is a prefix only: inside or after the digest it is refused", () => {
    const v = new SignatureVerifier([GITHUB.key]);
    for (const bad of [`${GITHUB.hex.slice(0, 10)}sha256=${GITHUB.hex.slice(10)}`, `${GITHUB.hex}sha256=`, `${GITHUB.b64.slice(0, 20)}sha256=${GITHUB.b64.slice(20)}`, `${GITHUB.b64}sha256=`]) {
      expect(parseSignature(bad), bad).toBeNull();
      expect(v.check(GITHUB.body, bad), bad).toEqual({ ok: false, reason: "bad_signature" });
    }
  });
});

describe("secrets checked before the receiver starts: the bar and the position", () => {
  const problems = (secrets: string[]): readonly string[] => {
    try {
      checkSecrets(secrets);
    } catch (e) {
      expect(e).toBeInstanceOf(ConfigError);
      return (e as ConfigError).problems;
    }
    return [];
  };

  it("16 characters pass, 15 do not", () => {
    expect(problems(["0123456789abcdef"])).toEqual([]);
    expect(problems(["0123456789abcde"])).toEqual([
      "webhookSecrets[0] (BENEFITS_WEBHOOK_SECRET, secret 1 of 1): expected at least 16 characters, got 15. Copy the whole secret from the portal's event configuration",
    ]);
  });

  it("names the secret by its index and its position counted from 1", () => {
    expect(problems(["0123456789abcdef", "0123456789abcdef", "short"])).toEqual([
      "webhookSecrets[2] (BENEFITS_WEBHOOK_SECRET, secret 3 of 3): expected at least 16 characters, got 5. Copy the whole secret from the portal's event configuration",
    ]);
  });
});

/**
 * `X-Service-Signature`: an HMAC-SHA256 of the raw request body, checked before the body is parsed
 * (a body parsed and re-serialised no longer hashes to what the sender signed).
 *
 * The spec leaves the digest's encoding open, so hex (either case) and base64 are accepted, each
 * with an optional `sha256=` prefix. Node's decoders are lenient (`Buffer.from("abzz", "hex")` is
 * one byte; base64 skips characters it does not know), so the header's form is checked with a
 * regular expression first, then decoded, re-encoded and compared with what was sent, and only a
 * 32-byte digest reaches `timingSafeEqual` (which throws on a length mismatch). Any other header is
 * a rejection, never an exception.
 *
 * Several secrets at once (a rotation): each is tried and the one that matched is reported, so an
 * old secret can be retired once nothing has matched it for a while.
 */
import { createHmac, timingSafeEqual } from "node:crypto";
import { ConfigError } from "../errors.js";

export const SIGNATURE_HEADER = "x-service-signature";

const HEX = /^[0-9a-fA-F]{64}$/;
const BASE64 = /^[A-Za-z0-9+/]{43}=$/;
const PREFIX = /^sha256=/;

/**
 * The digest a header carries, or null when the header is not one strict form of 32 bytes.
 *
 * @example parseSignature("sha256=" + "ab".repeat(32))?.length // 32
 * @example parseSignature("abzz") // null
 */
export function parseSignature(header: string): Buffer | null {
  const value = header.replace(PREFIX, "");
  let digest: Buffer;
  if (HEX.test(value)) {
    digest = Buffer.from(value, "hex");
    if (digest.toString("hex") !== value.toLowerCase()) return null;
  } else if (BASE64.test(value)) {
    digest = Buffer.from(value, "base64");
    // Re-encoding catches a last character whose unused bits are set (two strings, one digest).
    if (digest.toString("base64") !== value) return null;
  } else return null;
  return digest.length === 32 ? digest : null;
}

export type SignatureCheck = { readonly ok: true; readonly secretIndex: number } | { readonly ok: false; readonly reason: "missing_signature" | "bad_signature" };

/** The shortest secret the receiver starts with: an HMAC key shorter than this is guessable. */
export const MIN_SECRET_LENGTH = 16;

/**
 * Refuse a secret that cannot be right before the receiver starts: too short, or holding spaces or
 * control characters (a secret pasted with a line break). The message names the secret by its
 * position, never by its value.
 */
export function checkSecrets(secrets: readonly string[]): void {
  const problems: string[] = [];
  secrets.forEach((s, i) => {
    const which = `webhookSecrets[${i}] (BENEFITS_WEBHOOK_SECRET, secret ${i + 1} of ${secrets.length})`;
    if (s.length < MIN_SECRET_LENGTH) problems.push(`${which}: expected at least ${MIN_SECRET_LENGTH} characters, got ${s.length}. Copy the whole secret from the portal's event configuration`);
    else if (/[\s\p{Cc}]/u.test(s)) problems.push(`${which}: it holds a space or a control character. Copy the secret again, without surrounding spaces or line breaks`);
  });
  if (problems.length > 0) throw new ConfigError(problems);
}

/**
 * Checks signatures against the configured secrets, in order.
 *
 * @example
 * const v = new SignatureVerifier(["old-secret-0123456789", "new-secret-0123456789"]);
 * v.check(rawBody, req.headers["x-service-signature"]); // { ok: true, secretIndex: 1 }
 */
export class SignatureVerifier {
  private readonly keys: readonly Buffer[];

  constructor(secrets: readonly (string | Buffer)[]) {
    // A string secret is its UTF-8 bytes (Buffer.from's default); a Buffer is copied.
    this.keys = secrets.map((s) => Buffer.from(s));
  }

  check(body: Buffer, header: string | readonly string[] | undefined): SignatureCheck {
    if (header === undefined || header === "") return { ok: false, reason: "missing_signature" };
    // A header sent twice is ambiguous: which one was meant is not ours to guess.
    if (typeof header !== "string") return { ok: false, reason: "bad_signature" };
    const digest = parseSignature(header);
    if (digest === null) return { ok: false, reason: "bad_signature" };
    let matched = -1;
    this.keys.forEach((key, i) => {
      // Every secret is tried: the time taken does not say which one matched.
      if (timingSafeEqual(createHmac("sha256", key).update(body).digest(), digest) && matched < 0) matched = i;
    });
    return matched >= 0 ? { ok: true, secretIndex: matched } : { ok: false, reason: "bad_signature" };
  }
}

import { createHmac, randomBytes } from "node:crypto";
import { chmodSync, existsSync, readFileSync, writeFileSync } from "node:fs";

export const PiiModes = ["token", "keep"] as const;
export type PiiMode = (typeof PiiModes)[number];

/**
 * Replace every `ssn` field, at any depth, by `ssn_token` (HMAC-SHA256 under the PII key, hex) and
 * `ssn_last4`. A plain hash would not do: nine digits are brute-forced in seconds. Returns a new
 * object; the input is not changed. With mode `keep` (asked for by name) the record passes as is.
 *
 * @example maskPii({id: "m1", ssn: "123-45-6789"}, key) // {id: "m1", ssn_token: "9f…", ssn_last4: "6789"}
 */
export function maskPii<T>(record: T, key: Buffer, mode: PiiMode = "token"): T {
  if (mode === "keep") return record;
  return mask(record, key) as T;
}

function mask(value: unknown, key: Buffer): unknown {
  if (Array.isArray(value)) return value.map((v) => mask(v, key));
  if (value === null || typeof value !== "object") return value;
  const out: Record<string, unknown> = {};
  for (const [k, v] of Object.entries(value)) {
    if (k === "ssn") {
      if (typeof v === "string" && v.length > 0) {
        const digits = v.replace(/\D/g, "");
        out.ssn_token = ssnToken(digits, key);
        out.ssn_last4 = digits.slice(-4);
      } else {
        out.ssn_token = null;
        out.ssn_last4 = null;
      }
    } else {
      out[k] = mask(v, key);
    }
  }
  return out;
}

/** HMAC-SHA256 of the SSN's digits (so `123-45-6789` and `123456789` give one token). */
export function ssnToken(digits: string, key: Buffer): string {
  return createHmac("sha256", key).update(digits).digest("hex");
}

/**
 * The PII key: the configured one, or one generated on first use and kept beside the database
 * (mode 0600). `created` tells the caller to say so once.
 */
export function loadOrCreatePiiKey(dbPath: string, configured: string | undefined): { key: Buffer; created: boolean; path?: string } {
  if (configured) return { key: Buffer.from(configured, "utf8"), created: false };
  const path = `${dbPath}.pii-key`;
  if (existsSync(path)) {
    const text = readFileSync(path, "utf8").trim();
    return { key: Buffer.from(text, "hex"), created: false, path };
  }
  const key = randomBytes(32);
  writeFileSync(path, `${key.toString("hex")}\n`, { mode: 0o600, flag: "wx" });
  chmodSync(path, 0o600);
  return { key, created: true, path };
}

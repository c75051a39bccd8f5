import { createHmac, randomBytes } from "node:crypto";
import { closeSync, existsSync, fchmodSync, fsyncSync, linkSync, readFileSync, rmSync, statSync, writeSync } from "node:fs";
import { PiiKeyError } from "../../errors.js";
import { ssnFieldsOf, tokeniseSsnShapes } from "../../pii/ssn-key.js";
import type { SsnMasker } from "../walk/canonical.js";
import { asDiskFull } from "../file/disk-full.js";
import { assertSnapshotFile } from "../file/snapshot-file.js";
import { openBesideSqlite } from "../file/sqlite-file.js";

/** The store's masker: it always tokenises shapes too. */
export type FullSsnMasker = SsnMasker & { readonly text: (s: string) => string };

export const PiiModes = ["token", "keep"] as const;
export type PiiMode = (typeof PiiModes)[number];

/**
 * Mask every SSN the one rule finds (`ssnFieldsOf`: `ssn`, `taxId`, `SS#`, a typed pair's value,
 * `ssnLast4` holding nine digits, ...), at any depth: each such key becomes `<key>_token`
 * (HMAC-SHA256 under the PII key, hex) and `<key>_last4`, each SSN shape in a string (value, list
 * element or key) `[ssn:<token>]`. A plain hash would not do: nine digits are brute-forced in
 * seconds. Returns a new object; the input is not changed. With mode `keep` (asked for by name)
 * the record passes as is.
 *
 * @example maskPii({id: "m1", ssn: "123-45-6789"}, key) // {id: "m1", ssn_token: "9f…", ssn_last4: "6789"}
 */
export function maskPii<T>(record: T, key: Buffer, mode: PiiMode = "token"): T {
  if (mode === "keep") return record;
  return mask(record, ssnMasker(key)) as T;
}

function mask(value: unknown, masker: FullSsnMasker): unknown {
  if (typeof value === "string") return masker.text(value);
  if (Array.isArray(value)) return value.map((v) => mask(v, masker));
  if (value === null || typeof value !== "object") return value;
  const obj = value as Record<string, unknown>;
  const ssn = ssnFieldsOf(obj);
  const out: Record<string, unknown> = {};
  for (const [k, v] of Object.entries(obj)) if (!ssn.includes(k)) out[masker.text(k)] = mask(v, masker);
  // What masking writes wins over a served key of the same name (`ssn_token` beside `ssn`).
  for (const k of ssn) [out[`${k}_last4`], out[`${k}_token`]] = masker(obj[k]);
  return out;
}

/**
 * The masker the canonical writer applies to every SSN field it meets: `[last4, token]`, or nulls
 * for an empty one or one that is neither text nor a number (whatever it holds is dropped). A list
 * of SSNs (`memberSSNs`) gives a list of each, element by element: one token for the whole list
 * would not match the same person's token under another key. Its `text` writes each shape in a
 * free text as `[ssn:<token>]`, the token of those nine digits (so it joins with `ssn_token`).
 */
export function ssnMasker(key: Buffer): FullSsnMasker {
  const one = (ssn: unknown): readonly [unknown, unknown] => {
    if (Array.isArray(ssn)) {
      const pairs = ssn.map(one);
      return [pairs.map((p) => p[0]), pairs.map((p) => p[1])];
    }
    if (typeof ssn === "number" && Number.isFinite(ssn)) ssn = String(ssn);
    if (typeof ssn !== "string" || ssn.length === 0) return [null, null];
    const digits = ssn.replace(/\D/g, "");
    return [digits.slice(-4), ssnToken(digits, key)];
  };
  const tokenOf = (digits: string) => ssnToken(digits, key);
  return Object.assign(one, { text: (s: string) => tokeniseSsnShapes(s, tokenOf) });
}

/** HMAC-SHA256 of the SSN's digits (so `123-45-6789` and `123456789` give one token). */
export function ssnToken(digits: string, key: Buffer): string {
  return createHmac("sha256", key).update(digits).digest("hex");
}

/**
 * The PII key: the configured one, or one generated on first use and kept beside the database
 * (mode 0600). `created` tells the caller to say so once. An existing key file that others may
 * read, or that does not hold exactly 32 bytes in hex, is refused with a {@link PiiKeyError} and
 * left as it is: every `ssn_token` in the snapshot depends on that exact key.
 *
 * @example
 * const { key, created, path } = loadOrCreatePiiKey("snapshot.db", process.env.BENEFITS_PII_KEY);
 */
export function loadOrCreatePiiKey(dbPath: string, configured: string | undefined): { key: Buffer; created: boolean; path?: string } {
  if (configured) return { key: Buffer.from(configured, "utf8"), created: false };
  const path = `${dbPath}.pii-key`;
  if (existsSync(path)) return { key: readKeyFile(path), created: false, path };
  // A key file beside another application's file would be a write to its folder: refuse first.
  assertSnapshotFile(dbPath);
  const key = randomBytes(32);
  let linked: boolean;
  try {
    linked = createKeyFileWhole(path, key);
  } catch (e) {
    throw asDiskFull(e, dbPath);
  }
  // Another command starting beside this one on the new snapshot linked its key first: that one is the key.
  if (!linked) return { key: readKeyFile(path), created: false, path };
  return { key, created: true, path };
}

/**
 * Create the key file `path` holding `key`, whole or not at all (issue 51: a key file created,
 * then written, was read empty by a second command starting at the same moment, which exited 2).
 * The key is written and fsynced into a temp file beside it (0600), then linked into place:
 * link(2) fails when `path` exists, so whoever looks sees no file or the whole of one. False when
 * another process linked its file first (this key is then thrown away); the temp file goes either way.
 */
export function createKeyFileWhole(path: string, key: Buffer): boolean {
  const tmp = `${path}.${process.pid}-${randomBytes(4).toString("hex")}.tmp`;
  try {
    const fd = openBesideSqlite(tmp, "wx", 0o600);
    try {
      fchmodSync(fd, 0o600);
      writeSync(fd, `${key.toString("hex")}\n`);
      fsyncSync(fd);
    } finally {
      closeSync(fd);
    }
    linkSync(tmp, path);
    return true;
  } catch (e) {
    if ((e as NodeJS.ErrnoException).code === "EEXIST" && existsSync(path)) return false;
    throw e;
  } finally {
    rmSync(tmp, { force: true });
  }
}

const KEY_HEX = /^[0-9a-f]{64}$/i;
// Not "set BENEFITS_PII_KEY": a configured key is used as text, not hex, so it would not give the same bytes.
const RESTORE = "restore the key file from your backup; a new key would not match the ssn_token values already in the snapshot";

export function readKeyFile(path: string): Buffer {
  const st = statSync(path);
  if (!st.isFile()) throw new PiiKeyError(path, `pii key: ${path} is not a file: ${RESTORE}`);
  const mode = st.mode & 0o777;
  if ((mode & 0o077) !== 0) {
    throw new PiiKeyError(
      path,
      `pii key: ${path} has mode 0${mode.toString(8)}, open to group or others: run \`chmod 600 ${path}\` (and consider who may have read it)`,
    );
  }
  const text = readFileSync(path, "utf8").trim();
  if (!KEY_HEX.test(text)) {
    // The length and the kind of characters say what went wrong without showing any of the key.
    const found = text.length === 0 ? "it is empty" : `it holds ${text.length} characters${/^[0-9a-f]*$/i.test(text) ? "" : ", not all hex"}`;
    throw new PiiKeyError(path, `pii key: ${path} must hold exactly 64 hex characters (a 32-byte key), but ${found}: ${RESTORE}`);
  }
  return Buffer.from(text, "hex");
}

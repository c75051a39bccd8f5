import { chmodSync, existsSync, lstatSync, mkdirSync, mkdtempSync, readFileSync, rmSync, statSync, symlinkSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { ConfigError } from "../../../src/errors.js";
import { loadOrCreatePiiKey } from "../../../src/store/pii/pii.js";

let dir: string;
let db: string;
let keyPath: string;
const GOOD = "0123456789abcdef".repeat(4);

beforeEach(() => {
  dir = mkdtempSync(join(tmpdir(), "pii-key-"));
  db = join(dir, "snap.db");
  keyPath = `${db}.pii-key`;
});
afterEach(() => rmSync(dir, { recursive: true, force: true }));

function writeKey(text: string, mode = 0o600) {
  writeFileSync(keyPath, text, { mode });
  chmodSync(keyPath, mode);
}

function refusal(): ConfigError {
  try {
    loadOrCreatePiiKey(db, undefined);
  } catch (err) {
    expect(err).toBeInstanceOf(ConfigError);
    return err as ConfigError;
  }
  throw new Error("expected the key file to be refused");
}

describe("loadOrCreatePiiKey: the key file beside the snapshot", () => {
  it("creates a 32-byte key with mode 0600, then reads the same key back", () => {
    const first = loadOrCreatePiiKey(db, undefined);
    expect(first.created).toBe(true);
    expect(first.key).toHaveLength(32);
    expect(statSync(keyPath).mode & 0o777).toBe(0o600);
    const again = loadOrCreatePiiKey(db, undefined);
    expect(again.created).toBe(false);
    expect(again.key.equals(first.key)).toBe(true);
  });

  it("accepts 64 hex characters with surrounding whitespace, in either case", () => {
    writeKey(`  ${GOOD.toUpperCase()}\r\n`);
    expect(loadOrCreatePiiKey(db, undefined).key.toString("hex")).toBe(GOOD);
  });

  it.each([0o644, 0o640, 0o604, 0o660, 0o601, 0o740].map((m) => [`0${m.toString(8)}`, m] as const))("refuses a key file with loose mode %s, naming the path and the fix", (_, mode) => {
    writeKey(`${GOOD}\n`, mode);
    const err = refusal();
    expect(err.code).toBe("PII_KEY");
    expect(err.message).toContain(keyPath);
    expect(err.message).toContain(`chmod 600 ${keyPath}`);
    expect(err.message).toContain(`0${(mode & 0o777).toString(8)}`);
    expect(err.message).not.toContain(GOOD);
    // Nothing was changed behind the user's back.
    expect(statSync(keyPath).mode & 0o777).toBe(mode & 0o777);
  });

  it.each([
    ["odd length", `${GOOD}a`],
    ["non-hex characters", `${GOOD.slice(0, 60)}zzzz`],
    ["too short", "abcd"],
    ["too long", `${GOOD}00`],
    ["empty", "\n"],
    ["a base64 key", Buffer.alloc(32, 7).toString("base64")],
    ["two keys", `${GOOD}\n${GOOD}`],
  ])("refuses a key file that is not 64 hex characters: %s", (_, text) => {
    writeKey(text);
    const err = refusal();
    expect(err.code).toBe("PII_KEY");
    expect(err.message).toContain(keyPath);
    expect(err.message).toMatch(/64 hex/);
    expect(err.message).toMatch(/restore/i);
    expect(err.message).not.toMatch(/delete|remove|rm /i);
    const trimmed = text.trim();
    if (trimmed.length >= 4) expect(err.message).not.toContain(trimmed.slice(0, 16));
    // The file is left as it was: the snapshot's tokens depend on it.
    expect(readFileSync(keyPath, "utf8")).toBe(text);
  });

  it("refuses a key path that is a directory, without touching it", () => {
    mkdirSync(keyPath, { mode: 0o700 });
    const err = refusal();
    expect(err.message).toContain(keyPath);
    expect(err.message).toMatch(/not a file/);
  });

  it("a key file that turns up between the check and the write (here a dangling link) is neither written through nor removed", () => {
    const target = join(dir, "elsewhere");
    symlinkSync(target, keyPath); // the check follows the link and finds no file
    let code: string | undefined;
    try {
      loadOrCreatePiiKey(db, undefined);
    } catch (e) {
      code = (e as NodeJS.ErrnoException).code;
    }
    expect(code).toBe("EEXIST");
    expect(existsSync(target)).toBe(false);
    expect(lstatSync(keyPath).isSymbolicLink()).toBe(true);
  });

  it("a configured key wins and the file is not consulted", () => {
    writeKey("not hex at all", 0o644);
    expect(loadOrCreatePiiKey(db, "configured-secret").key.toString("utf8")).toBe("configured-secret");
  });
});

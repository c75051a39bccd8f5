/** The snapshot records which PII key tokenised it (a keyed check, never the key), and refuses another. */
import { existsSync, mkdtempSync, readFileSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { openDatabase } from "../../../src/store/file/database.js";
import { PiiKeyMismatchError, readPiiKeyCheck, resolveSnapshotPiiKey } from "../../../src/store/pii/pii-key-identity.js";

const KEY_A = "unit-pii-key-identity-A-012345";
let dir: string;
let db: string;
beforeEach(() => {
  dir = mkdtempSync(join(tmpdir(), "pii-identity-"));
  db = join(dir, "snap.db");
});
afterEach(() => rmSync(dir, { recursive: true, force: true }));

const check = () => {
  const conn = openDatabase(db);
  try {
    return readPiiKeyCheck(conn);
  } finally {
    conn.close();
  }
};

describe("resolveSnapshotPiiKey", () => {
  it("a snapshot with runs and no check adopts the current key, then refuses another", () => {
    const conn = openDatabase(db);
    conn.prepare("INSERT INTO _runs (job, status, started_at, options) VALUES ('sync', 'succeeded', '2026-01-01T00:00:00Z', '{}')").run();
    conn.close();
    expect(check()).toBeUndefined();
    expect(resolveSnapshotPiiKey(db, KEY_A, { record: false }).outcome).toBe("unchecked");
    expect(check()).toBeUndefined();
    expect(resolveSnapshotPiiKey(db, KEY_A).outcome).toBe("adopted");
    expect(check()).toMatch(/^[0-9a-f]{64}$/);
    expect(check()).not.toContain(Buffer.from(KEY_A).toString("hex"));
    expect(resolveSnapshotPiiKey(db, KEY_A).outcome).toBe("same");
    expect(() => resolveSnapshotPiiKey(db, "unit-pii-key-identity-B-987654")).toThrow(PiiKeyMismatchError);
  });

  it("a generated key file is recorded on the first run; without it the snapshot is refused and no new key is made", () => {
    const first = resolveSnapshotPiiKey(db, undefined);
    expect([first.created, first.outcome]).toEqual([true, "first"]);
    const keyFile = `${db}.pii-key`;
    const saved = readFileSync(keyFile, "utf8");
    rmSync(keyFile);
    expect(() => resolveSnapshotPiiKey(db, undefined)).toThrow(/BENEFITS_PII_KEY is unset and .*snap\.db\.pii-key is missing/);
    expect(existsSync(keyFile)).toBe(false);
    expect(saved).not.toBe("");
  });
});

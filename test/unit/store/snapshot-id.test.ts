/**
 * Snapshot ids survive the SSN mask of messages: a hex id held nine digits in a row in about one
 * case in eighteen (10,914 of 200,000 random ones), and a refusal naming it printed `[ssn]` in
 * its middle (s3-out.test failed so once in four suites). A new snapshot's id has no digit.
 */
import { describe, expect, it } from "vitest";
import { OutputSnapshotError } from "../../../src/sinks/files/folder-owner.js";
import { openDatabase } from "../../../src/store/file/database.js";
import { newSnapshotId } from "../../../src/store/file/snapshot-id.js";

describe("snapshot ids", () => {
  it("are 32 letters a-p, distinct, and a refusal naming two of them shows both as they are", () => {
    const ids = Array.from({ length: 20_000 }, newSnapshotId);
    expect(ids.every((id) => /^[a-p]{32}$/.test(id))).toBe(true);
    expect(new Set(ids).size).toBe(ids.length);
    for (const [a, b] of [[ids[0]!, ids[1]!], ["ponmlkjihgfedcbaabcdefghijklmnop", "aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa"]] as const) {
      const e = new OutputSnapshotError(`/data belongs to snapshot ${a}, and this snapshot is snapshot ${b}`);
      expect(e.message).toBe(`/data belongs to snapshot ${a}, and this snapshot is snapshot ${b}`);
    }
    // What a hex id could come to: nine digits in a row are masked, PHI first.
    expect(new OutputSnapshotError("belongs to snapshot e12ca7d0f840603403ca8a18d80a1a9f").message).toContain("[ssn]");
  });

  it("a new snapshot file gets one", () => {
    const db = openDatabase(":memory:");
    try {
      expect(db.prepare("SELECT value FROM _meta WHERE key = 'snapshot_id'").pluck().get()).toMatch(/^[a-p]{32}$/);
    } finally {
      db.close();
    }
  });
});

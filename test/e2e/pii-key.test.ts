/**
 * The PII key is part of the snapshot's identity (issue 38): a sync with another key than the one
 * the snapshot was tokenised with, or with none where its key file is gone, would re-tokenise every
 * SSN and report every member as updated to every sink. It exits 2 and changes nothing instead.
 * Through the built CLI, on real files, against the sandbox over loopback.
 */
import BetterSqlite3 from "better-sqlite3";
import { existsSync, mkdtempSync, readdirSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { startSandbox, type Sandbox } from "../../src/sandbox/index.js";
import { startCli } from "../helpers/cli-process.js";

const KEY_A = "pii-key-identity-A-0123456789";
const KEY_B = "pii-key-identity-B-9876543210";
let sb: Sandbox;
let dir: string;

beforeAll(async () => {
  sb = await startSandbox({ members: 60, groups: 2, seed: 38 });
  dir = mkdtempSync(join(tmpdir(), "bsync-pii-key-"));
});
afterAll(async () => {
  await sb?.close();
  if (dir) rmSync(dir, { recursive: true, force: true });
});

/** What a refused run must leave as it was: runs, their counts, the changes feed, the `_meta` rows. */
function state(db: string): unknown {
  const conn = new BetterSqlite3(db, { readonly: true, fileMustExist: true });
  try {
    return {
      runs: conn.prepare("SELECT run_id, status FROM _runs ORDER BY run_id").all(),
      counts: conn.prepare("SELECT * FROM _run_counts ORDER BY run_id, resource").all(),
      changes: conn.prepare("SELECT COUNT(*) FROM changes").pluck().get(),
      meta: conn.prepare("SELECT key, value FROM _meta ORDER BY key").all(),
    };
  } finally {
    conn.close();
  }
}

function updatedIn(db: string, runId: number): number {
  const conn = new BetterSqlite3(db, { readonly: true, fileMustExist: true });
  try {
    return conn.prepare("SELECT SUM(updated) FROM _run_counts WHERE run_id = ?").pluck().get(runId) as number;
  } finally {
    conn.close();
  }
}

describe("a sync with another PII key than the snapshot's", () => {
  it("A, then B, then none: B and none exit 2 and change nothing; back on A, nothing is updated", async () => {
    const db = join(dir, "snap.db");
    const env = (key?: string) => ({ BENEFITS_BASE_URL: sb.baseUrl, BENEFITS_API_KEY: sb.keys.full, BENEFITS_DB: db, ...(key ? { BENEFITS_PII_KEY: key } : {}) });

    const first = await startCli(["sync"], env(KEY_A)).done;
    expect(first.code, first.stderr).toBe(0);
    const before = state(db);

    const other = await startCli(["sync"], env(KEY_B)).done;
    expect(other.code, other.stdout + other.stderr).toBe(2);
    expect(other.stderr).toMatch(/tokenised with another PII key than this run's \(BENEFITS_PII_KEY\)/);
    expect(other.stderr).toMatch(/Restore the key the snapshot was made with/);
    expect(other.stderr).toMatch(/not available in this version/);
    expect(other.stderr + other.stdout).not.toContain(KEY_B);
    expect(state(db)).toEqual(before);

    const none = await startCli(["sync"], env()).done;
    expect(none.code, none.stdout + none.stderr).toBe(2);
    expect(none.stderr).toMatch(/BENEFITS_PII_KEY is unset and .*snap\.db\.pii-key is missing/);
    expect(existsSync(`${db}.pii-key`)).toBe(false);
    expect(readdirSync(dir).filter((f) => f.includes("pii-key"))).toEqual([]);
    expect(state(db)).toEqual(before);

    const back = await startCli(["sync", "--json"], env(KEY_A)).done;
    expect(back.code, back.stderr).toBe(0);
    const runs = (state(db) as { runs: { run_id: number }[] }).runs;
    expect(runs).toHaveLength(2);
    expect(updatedIn(db, runs[1]!.run_id)).toBe(0);
  });
});

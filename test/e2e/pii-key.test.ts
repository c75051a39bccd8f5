/**
 * The PII key is part of the snapshot's identity (issue 38): a sync with another key than the one
 * the snapshot was tokenised with, or with none where its key file is gone, would re-tokenise every
 * SSN and report every member as updated to every sink. It exits 2 and changes nothing instead.
 * Through the built CLI, on real files, against the sandbox over loopback.
 */
import BetterSqlite3 from "better-sqlite3";
import { createHmac } from "node:crypto";
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
    expect(other.stderr).toMatch(/benefits-sync pii rekey --old-key-env NAME/);
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

/** Every version's `ssn_token` (current and history), by member id: [valid_to_run, token]. */
function tokens(db: string): { id: string; current: boolean; token: string | null; column: string | null; hash: string; data: string }[] {
  const conn = new BetterSqlite3(db, { readonly: true, fileMustExist: true });
  try {
    const rows = conn.prepare("SELECT v.id, v.valid_to_run IS NULL AS current, v.ssn_token AS column, d.hash, d.data FROM _members_v v JOIN _members_d d ON d.vid = v.vid ORDER BY v.vid").all() as { id: string; current: number; column: string | null; hash: string; data: string }[];
    return rows.map((r) => ({ ...r, current: r.current === 1, token: (JSON.parse(r.data) as { ssn_token?: string | null }).ssn_token ?? null }));
  } finally {
    conn.close();
  }
}

describe("pii rekey", () => {
  it("A, then a day, then B and none refused; pii rekey from A to B: every token is B's of the sandbox's SSN, history too; the next sync under B updates nothing", async () => {
    const rekeyed = await startSandbox({ members: 60, groups: 2, seed: 381 });
    try {
      const db = join(dir, "rekey.db");
      const env = (key?: string, more: Record<string, string> = {}) => ({
        BENEFITS_BASE_URL: rekeyed.baseUrl,
        BENEFITS_API_KEY: rekeyed.keys.full,
        BENEFITS_DB: db,
        ...(key ? { BENEFITS_PII_KEY: key } : {}),
        ...more,
      });
      // The sandbox's SSN of each member, before the day and after (a member the day deletes keeps its versions).
      const ssn = new Map<string, string>();
      const served = () => {
        for (const m of rekeyed.iterate("members")) ssn.set(m.id, m.ssn.replace(/\D/g, ""));
      };
      served();
      expect((await startCli(["sync"], env(KEY_A)).done).code).toBe(0);
      await rekeyed.advance();
      served();
      expect((await startCli(["sync"], env(KEY_A)).done).code).toBe(0);
      const before = state(db);
      const versionsBefore = tokens(db);
      expect(versionsBefore.some((v) => !v.current && v.token !== null), "a history version with a token").toBe(true);

      const other = await startCli(["sync"], env(KEY_B)).done;
      expect(other.code, other.stderr).toBe(2);
      const none = await startCli(["sync"], env()).done;
      expect(none.code, none.stderr).toBe(2);
      expect(readdirSync(dir).filter((f) => f.startsWith("rekey.db.pii-key"))).toEqual([]);
      expect(state(db)).toEqual(before);

      const dry = await startCli(["pii", "rekey", "--old-key-env", "OLD_PII_KEY", "--dry-run"], env(KEY_B, { OLD_PII_KEY: KEY_A })).done;
      expect(dry.code, dry.stderr).toBe(0);
      expect(dry.stdout).toMatch(/Dry run: \d+ distinct tokens .* about \d+ s\. Nothing was changed/);
      expect(state(db)).toEqual(before);

      const rekey = await startCli(["pii", "rekey", "--old-key-env", "OLD_PII_KEY"], env(KEY_B, { OLD_PII_KEY: KEY_A })).done;
      expect(rekey.code, rekey.stderr).toBe(0);
      expect(rekey.stdout).toMatch(/no run and no change recorded/);
      expect(rekey.stdout).toMatch(/benefits-sync export --from-run 1 --run N --out NEW_DIR/);
      expect(rekey.stdout + rekey.stderr).not.toContain(KEY_A);
      expect(rekey.stdout + rekey.stderr).not.toContain(KEY_B);

      // The truth, recomputed here: HMAC-SHA256 under B of each member's digits as the sandbox serves them.
      const after = tokens(db);
      expect(after.map((v) => [v.id, v.current])).toEqual(versionsBefore.map((v) => [v.id, v.current]));
      const wrong = after.filter((v) => v.token !== createHmac("sha256", KEY_B).update(ssn.get(v.id) ?? "?").digest("hex") || v.column !== v.token);
      expect(wrong.map((v) => v.id)).toEqual([]);
      const { runs, counts, changes } = state(db) as { runs: unknown; counts: unknown; changes: unknown };
      expect({ runs, counts, changes }).toMatchObject({ runs: (before as { runs: unknown }).runs, counts: (before as { counts: unknown }).counts, changes: (before as { changes: unknown }).changes });

      const next = await startCli(["sync"], env(KEY_B)).done;
      expect(next.code, next.stderr).toBe(0);
      const last = (state(db) as { runs: { run_id: number }[] }).runs.at(-1)!.run_id;
      expect(updatedIn(db, last)).toBe(0);
    } finally {
      await rekeyed.close();
    }
  });
});

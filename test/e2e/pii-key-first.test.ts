/**
 * Two commands started together on a new snapshot (issue 51): the first to need the PII key
 * creates the key file, the other reads it. The key file was created, then written, so the second
 * could read it empty (or find it made under its own `wx`) and exit 2. It is now written whole
 * into a temp file and linked into place. Real CLI processes against the sandbox over loopback;
 * test/helpers/slow-key-write.cjs makes every write into a key file wait, as a loaded disk would,
 * so that the second command looks while the first is writing.
 */
import BetterSqlite3 from "better-sqlite3";
import { createHmac } from "node:crypto";
import { mkdtempSync, readdirSync, readFileSync, rmSync, statSync } from "node:fs";
import { tmpdir } from "node:os";
import { dirname, join } from "node:path";
import { fileURLToPath } from "node:url";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { startSandbox, type Sandbox } from "../../src/sandbox/index.js";
import { startCli } from "../helpers/cli-process.js";

const SLOW = join(dirname(fileURLToPath(import.meta.url)), "..", "helpers", "slow-key-write.cjs");
let sb: Sandbox;
let dir: string;

beforeAll(async () => {
  sb = await startSandbox({ members: 20, groups: 1, seed: 51 });
  dir = mkdtempSync(join(tmpdir(), "bsync-pii-key-first-"));
});
afterAll(async () => {
  await sb?.close();
  if (dir) rmSync(dir, { recursive: true, force: true });
});

/** The check value the snapshot records, and the one of its key file's key. */
function checks(db: string): { recorded: unknown; ofKeyFile: string } {
  const conn = new BetterSqlite3(db, { readonly: true, fileMustExist: true });
  try {
    const id = conn.prepare("SELECT value FROM _meta WHERE key = 'snapshot_id'").pluck().get() as string;
    const key = Buffer.from(readFileSync(`${db}.pii-key`, "utf8").trim(), "hex");
    return {
      recorded: conn.prepare("SELECT value FROM _meta WHERE key = 'pii_key_check'").pluck().get(),
      ofKeyFile: createHmac("sha256", key).update(`benefits-sync pii key check ${id}`).digest("hex"),
    };
  } finally {
    conn.close();
  }
}

describe("two syncs started together on a new snapshot, with no BENEFITS_PII_KEY", () => {
  for (const [slow, times] of [[true, 3], [false, 3]] as const) {
    it(`${slow ? "key writes slowed" : "as they come"}, ${times} new snapshots: neither exits 2, one key file whole (0600), the snapshot records its key`, async () => {
      for (let i = 0; i < times; i++) {
        const db = join(dir, `${slow ? "slow" : "plain"}-${i}.db`);
        const env = { BENEFITS_BASE_URL: sb.baseUrl, BENEFITS_API_KEY: sb.keys.full, BENEFITS_DB: db, ...(slow ? { NODE_OPTIONS: `--require ${SLOW}` } : {}) };
        const runs = await Promise.all([startCli(["sync"], env).done, startCli(["sync"], env).done]);
        for (const r of runs) {
          expect(r.stderr).not.toMatch(/pii key:/);
          // 75: the other sync held the snapshot (try again later, nothing changed).
          expect([0, 75], `exit ${r.code}: ${r.stderr}`).toContain(r.code);
        }
        expect(runs.some((r) => r.code === 0)).toBe(true);
        expect(readFileSync(`${db}.pii-key`, "utf8")).toMatch(/^[0-9a-f]{64}\n$/);
        expect(statSync(`${db}.pii-key`).mode & 0o777).toBe(0o600);
        // No temp file of the loser (or the winner) is left beside it.
        expect(readdirSync(dir).filter((f) => f.startsWith(`${slow ? "slow" : "plain"}-${i}.db.pii-key`))).toEqual([`${slow ? "slow" : "plain"}-${i}.db.pii-key`]);
        const c = checks(db);
        expect(c.recorded).toBe(c.ofKeyFile);
      }
    });
  }
});

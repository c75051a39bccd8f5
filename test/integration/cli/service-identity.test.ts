/**
 * The issue: a cron job without BENEFITS_BASE_URL walked the embedded sandbox against a real
 * snapshot. Now nothing is guessed, and a snapshot refuses to sync from a service it does not copy.
 */
import BetterSqlite3 from "better-sqlite3";
import { existsSync, mkdtempSync, readdirSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { ExitCode } from "../../../src/cli/exit-codes.js";
import { startSandbox, type Sandbox } from "../../../src/sandbox/index.js";
import { runCli } from "../../unit/cli/run-cli.js";

let other: Sandbox;
let dir: string;
const PII = "service-test-pii-key-0123456789";

beforeAll(async () => {
  // A second service: seed 5, so its key differs from the embedded sandbox's (seed 1).
  other = await startSandbox({ members: 120, groups: 2, seed: 5 });
  dir = mkdtempSync(join(tmpdir(), "bsync-service-"));
});
afterAll(async () => {
  await other?.close();
  rmSync(dir, { recursive: true, force: true });
});

const runsIn = (db: string) => {
  const conn = new BetterSqlite3(db, { readonly: true });
  try {
    return {
      runs: conn.prepare("SELECT COUNT(*) FROM _runs").pluck().get() as number,
      meta: conn.prepare("SELECT key, value FROM _meta WHERE key = 'service' ORDER BY key").all() as { key: string; value: string }[],
      members: conn.prepare("SELECT COUNT(*) FROM members").pluck().get() as number,
    };
  } finally {
    conn.close();
  }
};

describe("which service: never guessed", () => {
  it("with no settings, sync and doctor exit 2 saying what to set, and create nothing", async () => {
    const work = mkdtempSync(join(dir, "empty-"));
    for (const argv of [["sync", "--json"], ["doctor"]]) {
      const r = await runCli(argv, { env: { BENEFITS_PII_KEY: PII }, cwd: work });
      expect(r.code).toBe(ExitCode.USAGE);
      expect(r.stderr).toContain("no service is configured");
      expect(r.stderr).toContain("BENEFITS_BASE_URL");
      expect(r.stderr).toContain("BENEFITS_API_KEY");
      expect(r.stderr).toContain("--env sandbox");
      expect(r.stdout).toBe("");
    }
    // Not the default ./benefits-sync.db, nor its key file: nothing at all.
    expect(readdirSync(work)).toEqual([]);
    expect(existsSync(join(work, "benefits-sync.db"))).toBe(false);
  });
});

describe("a snapshot remembers the service it copies", () => {
  it("synced from the embedded sandbox, it refuses another base URL (exit 2, unchanged, no key printed) and accepts the sandbox again", async () => {
    const db = join(dir, "sandbox.db");
    const env = { BENEFITS_DB: db, BENEFITS_PII_KEY: PII };
    const first = await runCli(["--env", "sandbox", "sync", "--json", "--quiet"], { env, cwd: dir });
    expect(first.stderr).toBe("");
    expect(first.code).toBe(ExitCode.OK);
    const before = runsIn(db);
    expect(before.runs).toBe(1);
    expect(before.meta).toEqual([{ key: "service", value: '{"environment":"sandbox"}' }]);

    const elsewhere = await runCli(["sync", "--json", "--allow-deletes"], {
      env: { ...env, BENEFITS_BASE_URL: other.baseUrl, BENEFITS_API_KEY: other.keys.full },
      cwd: dir,
    });
    expect(elsewhere.code).toBe(ExitCode.USAGE);
    expect(elsewhere.stderr).toContain("the embedded sandbox");
    expect(elsewhere.stderr).toContain(other.baseUrl);
    expect(elsewhere.stderr).toContain("--db");
    expect(elsewhere.stdout + elsewhere.stderr).not.toContain(other.keys.full);
    expect(runsIn(db)).toEqual(before);

    // Asked for by the environment variable this time: the same service, accepted.
    const again = await runCli(["sync", "--json", "--quiet"], { env: { ...env, BENEFITS_ENV: "sandbox" }, cwd: dir });
    expect(again.code).toBe(ExitCode.OK);
    expect(runsIn(db).runs).toBe(2);
  });

  it("synced from a base URL, it accepts that URL again and refuses the embedded sandbox", async () => {
    const db = join(dir, "remote.db");
    const env = { BENEFITS_DB: db, BENEFITS_PII_KEY: PII, BENEFITS_BASE_URL: `${other.baseUrl}/`, BENEFITS_API_KEY: other.keys.full };
    expect((await runCli(["sync", "--quiet"], { env, cwd: dir })).code).toBe(ExitCode.OK);
    expect(runsIn(db).meta).toEqual([{ key: "service", value: JSON.stringify({ baseUrl: other.baseUrl }) }]);
    expect((await runCli(["sync", "--quiet"], { env, cwd: dir })).code).toBe(ExitCode.OK);
    const before = runsIn(db);
    expect(before.runs).toBe(2);

    const { BENEFITS_BASE_URL: _url, BENEFITS_API_KEY: _key, ...noService } = env;
    const sandbox = await runCli(["--env", "sandbox", "sync"], { env: noService, cwd: dir });
    expect(sandbox.code).toBe(ExitCode.USAGE);
    expect(sandbox.stderr).toContain(`the service at ${other.baseUrl}`);
    expect(sandbox.stderr).toContain("the embedded sandbox");
    expect(runsIn(db)).toEqual(before);
  });
});

/**
 * A run another process holds: `sync` changes nothing and exits 75; `runs --abandon N` ends a run
 * known to be dead, and the next sync proceeds (and resumes nothing it should not).
 */
import BetterSqlite3 from "better-sqlite3";
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { ExitCode } from "../../../src/cli/exit-codes.js";
import { startSandbox, type Sandbox } from "../../../src/sandbox/index.js";
import { runCli } from "../../unit/cli/run-cli.js";

let sb: Sandbox;
let dir: string;
let env: Record<string, string>;

beforeAll(async () => {
  sb = await startSandbox({ members: 100, groups: 2, seed: 4 });
  dir = mkdtempSync(join(tmpdir(), "bsync-lease-"));
  env = { BENEFITS_BASE_URL: sb.baseUrl, BENEFITS_API_KEY: sb.keys.full, BENEFITS_DB: join(dir, "snap.db"), BENEFITS_PII_KEY: "lease-test-pii-key-0123456789" };
});
afterAll(async () => {
  await sb?.close();
  rmSync(dir, { recursive: true, force: true });
});

describe("a snapshot held by another run", () => {
  it("sync exits 75 and changes nothing; runs --abandon ends the run; the next sync succeeds", async () => {
    expect((await runCli(["sync", "--json", "--quiet"], { env, cwd: dir })).code).toBe(ExitCode.OK);
    // A run of another container, alive by its lease for the next hour.
    const db = new BetterSqlite3(env.BENEFITS_DB!);
    const until = new Date(Date.now() + 3_600_000).toISOString();
    const held = Number(
      db
        .prepare("INSERT INTO _runs (job, status, started_at, options, pid, host, fresh, owner, lease_until) VALUES ('sync', 'running', ?, '{}', 1, 'other-host', '[]', 'x', ?)")
        .run(new Date().toISOString(), until).lastInsertRowid,
    );
    const count = () => db.prepare("SELECT COUNT(*) FROM _runs").pluck().get();
    const before = count();

    const busy = await runCli(["sync", "--json"], { env, cwd: dir });
    expect(busy.code).toBe(ExitCode.BUSY);
    expect(JSON.parse(busy.stdout.trim().split("\n").pop()!)).toMatchObject({ runId: null, status: "busy", error: { code: "SNAPSHOT_BUSY" } });
    expect(busy.stderr + busy.stdout).toContain(`benefits-sync runs --abandon ${held}`);
    expect(count()).toBe(before);

    const wrong = await runCli(["runs", "--abandon", "1"], { env, cwd: dir });
    expect(wrong.code).toBe(ExitCode.USAGE);
    expect(wrong.stderr).toMatch(/run 1 is not running/);

    const ok = await runCli(["runs", "--abandon", String(held)], { env, cwd: dir });
    expect(ok.code).toBe(ExitCode.OK);
    expect(db.prepare("SELECT status, error FROM _runs WHERE run_id = ?").get(held)).toMatchObject({ status: "failed", error: expect.stringMatching(/^ABANDONED: abandoned by hand/) });

    const after = await runCli(["sync", "--json", "--quiet"], { env, cwd: dir });
    expect(after.code).toBe(ExitCode.OK);
    db.close();
  });
});

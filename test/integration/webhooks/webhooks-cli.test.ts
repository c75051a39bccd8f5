/**
 * `webhooks status` and `webhooks apply --once` on a snapshot the CLI synced: the inbox filled as
 * the receiver fills it, drained by the worker into a recorded run, and told by status.
 */
import BetterSqlite3 from "better-sqlite3";
import { existsSync, mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { ExitCode } from "../../../src/cli/exit-codes.js";
import { startSandbox, type Sandbox } from "../../../src/sandbox/index.js";
import { Inbox, inboxPathFor } from "../../../src/webhooks/inbox.js";
import { runCli } from "../../unit/cli/run-cli.js";

let sb: Sandbox;
let dir: string;
let env: Record<string, string>;

beforeAll(async () => {
  sb = await startSandbox({ members: 100, groups: 2, seed: 5 });
  dir = mkdtempSync(join(tmpdir(), "bsync-whcli-"));
  env = { BENEFITS_BASE_URL: sb.baseUrl, BENEFITS_API_KEY: sb.keys.full, BENEFITS_DB: join(dir, "snap.db"), BENEFITS_PII_KEY: "webhooks-cli-pii-key-0123456789" };
});
afterAll(async () => {
  await sb?.close();
  rmSync(dir, { recursive: true, force: true });
});

describe("webhooks status and webhooks apply", () => {
  it("status before any event says so and creates nothing; apply --once drains the inbox into a webhooks run that status and runs show", async () => {
    const none = await runCli(["webhooks", "status"], { env, cwd: dir });
    expect(none.code).toBe(ExitCode.OK);
    expect(none.stdout).toContain("No webhook event received yet");
    expect(existsSync(inboxPathFor(env.BENEFITS_DB!))).toBe(false);
    expect((await runCli(["sync", "--quiet"], { env, cwd: dir })).code).toBe(ExitCode.OK);
    const ids = [...sb.iterate("members")].slice(0, 4).map((m) => m.id);
    const inbox = Inbox.open(inboxPathFor(env.BENEFITS_DB!));
    const at = new Date(Date.now() - 90_000).toISOString();
    inbox.accept(ids.map((memberId, i) => ({ id: `e${i}`, type: "member_update", memberId, receivedAt: at })));
    inbox.accept([{ id: "x1", type: "group_update", memberId: null, receivedAt: at }]);
    inbox.close();

    const pending = await runCli(["webhooks", "status", "--json"], { env, cwd: dir });
    expect(pending.code).toBe(ExitCode.OK);
    const st = JSON.parse(pending.stdout) as { pending: number; oldestPendingAgeSeconds: number; ignored: number; parked: unknown[]; lastApplied: unknown };
    expect(st).toMatchObject({ pending: 4, ignored: 1, parked: [], lastApplied: null });
    expect(st.oldestPendingAgeSeconds).toBeGreaterThanOrEqual(90);

    // Another process's sync holds the snapshot: exit 75, every event still pending.
    const db = new BetterSqlite3(env.BENEFITS_DB!);
    const held = Number(
      db
        .prepare("INSERT INTO _runs (job, status, started_at, options, pid, host, fresh, owner, lease_until) VALUES ('sync', 'running', ?, '{}', 1, 'other-host', '[]', 'x', ?)")
        .run(new Date().toISOString(), new Date(Date.now() + 3_600_000).toISOString()).lastInsertRowid,
    );
    const busy = await runCli(["webhooks", "apply", "--once"], { env, cwd: dir });
    expect(busy.code).toBe(ExitCode.BUSY);
    expect(busy.stderr).toContain(`run ${held}`);
    expect(busy.stderr).toMatch(/4 events stay pending/);
    db.prepare("UPDATE _runs SET status = 'failed', lease_until = NULL WHERE run_id = ?").run(held);
    db.close();

    const applied = await runCli(["webhooks", "apply", "--once", "--json"], { env, cwd: dir });
    expect(applied.code).toBe(ExitCode.OK);
    const rep = JSON.parse(applied.stdout) as { applied: number; runs: { runId: number }[] };
    expect(rep.applied).toBe(4);
    expect(rep.runs).toHaveLength(1);
    const text = await runCli(["webhooks", "status"], { env, cwd: dir });
    expect(text.stdout).toMatch(/pending:\s+0/);
    expect(text.stdout).toContain(`last applied: run ${rep.runs[0]!.runId}`);
    const runs = await runCli(["runs", "--json"], { env, cwd: dir });
    expect((JSON.parse(runs.stdout) as { run_id: number; job: string }[]).find((r) => r.run_id === rep.runs[0]!.runId)?.job).toBe("webhooks");
    expect(text.stdout + applied.stdout + busy.stderr).not.toContain(sb.keys.full);
  });
});

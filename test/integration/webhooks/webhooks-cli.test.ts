/**
 * `webhooks status` and `webhooks apply --once` on a snapshot the CLI synced: the inbox filled as
 * the receiver fills it, drained by the worker into a recorded run, and told by status; an event
 * the service keeps failing is parked, and status shows it with its reason, redacted.
 */
import BetterSqlite3 from "better-sqlite3";
import { existsSync, mkdirSync, mkdtempSync, rmSync, writeFileSync } from "node:fs";
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

  it("an event whose member the service keeps failing is parked after webhooks.maxAttempts, and status shows it, text and --json, with its reason redacted", async () => {
    // A snapshot of its own, whose configuration gives up after one attempt (the default retries for minutes).
    const here = join(dir, "parked");
    mkdirSync(here);
    writeFileSync(join(here, "benefits-sync.config.json"), JSON.stringify({ webhooks: { maxAttempts: 1 }, http: { retry: { maxAttempts: 1 } } }));
    const envHere = { ...env, BENEFITS_DB: join(here, "snap.db") };
    expect((await runCli(["sync", "--quiet"], { env: envHere, cwd: here })).code).toBe(ExitCode.OK);
    const [sick, well] = [...sb.iterate("members")].slice(5, 7).map((m) => m.id);
    const inbox = Inbox.open(inboxPathFor(envHere.BENEFITS_DB));
    const at = new Date().toISOString();
    inbox.accept([
      { id: "evt_sick", type: "member_update", memberId: sick!, receivedAt: at },
      { id: "evt_well", type: "member_update", memberId: well!, receivedAt: at },
    ]);
    inbox.close();
    // The service fails this member's lookup, and its message names a person by SSN (as a real one's may).
    const ssn = "123-45-6789";
    sb.setFaults({ pathPrefix: `/v1/members/${sick}`, http500: 1, errorMessage: `member Jane Roe (SSN ${ssn}) is under review` });
    let applied;
    try {
      applied = await runCli(["webhooks", "apply", "--once"], { env: envHere, cwd: here });
    } finally {
      sb.setFaults({});
    }
    expect(applied.code, applied.stderr).toBe(ExitCode.OK);
    expect(applied.stdout).toMatch(/1 event applied, .* 0 to retry, 1 parked; 0 pending/);

    const json = await runCli(["webhooks", "status", "--json"], { env: envHere, cwd: here });
    expect(json.code).toBe(ExitCode.OK);
    const st = JSON.parse(json.stdout) as { pending: number; applied: number; parked: { id: string; memberId: string; reason: string; at: string }[] };
    expect(st).toMatchObject({ pending: 0, applied: 1 });
    expect(st.parked).toHaveLength(1);
    const parked = st.parked[0]!;
    expect(parked).toMatchObject({ id: "evt_sick", memberId: sick });
    expect(Number.isNaN(Date.parse(parked.at))).toBe(false);
    expect(parked.reason).toContain(`GET /v1/members/${sick} answered 500`);
    // The lookup's answers carry people's data: the reason says what failed, never what the service said of whom.
    expect(parked.reason).toContain("its message not quoted");

    const text = await runCli(["webhooks", "status"], { env: envHere, cwd: here });
    expect(text.code).toBe(ExitCode.OK);
    expect(text.stdout).toMatch(/parked:\s+1, given up on/);
    expect(text.stdout).toContain(`    evt_sick (member ${sick}) at ${parked.at}: ${parked.reason}\n`);
    expect(text.stdout).not.toContain("evt_well");
    for (const out of [applied.stdout + applied.stderr, json.stdout, text.stdout]) {
      expect(out).not.toContain(ssn);
      expect(out).not.toContain("Jane Roe");
      expect(out).not.toContain(sb.keys.full);
    }
  });

  it("status shows an event id, member id and reason holding terminal control characters escaped, never raw (a signed id holding ESC[2J would clear the screen); --json stays valid JSON", async () => {
    const here = join(dir, "controls");
    mkdirSync(here);
    const envHere = { ...env, BENEFITS_DB: join(here, "snap.db") };
    const inbox = Inbox.open(inboxPathFor(envHere.BENEFITS_DB));
    const at = new Date().toISOString();
    const id = "evt_\x1b[2J\x07";
    inbox.accept([{ id, type: "member_update", memberId: "m\x9b1\r2", receivedAt: at }]);
    inbox.park([id], "the service said \x1b[2Jcleared\x07\nnext line\x7f", at);
    inbox.close();

    const text = await runCli(["webhooks", "status"], { env: envHere, cwd: here });
    expect(text.code, text.stderr).toBe(ExitCode.OK);
    expect(text.stdout).toContain(`    evt_\\x1b[2J\\x07 (member m\\x9b1\\x0d2) at ${at}: the service said \\x1b[2Jcleared\\x07\\x0anext line\\x7f\n`);
    // eslint-disable-next-line no-control-regex
    expect(text.stdout).not.toMatch(/[\u0000-\u0009\u000b-\u001f\u007f-\u009f]/);

    const json = await runCli(["webhooks", "status", "--json"], { env: envHere, cwd: here });
    expect(json.code, json.stderr).toBe(ExitCode.OK);
    const st = JSON.parse(json.stdout) as { parked: { id: string; memberId: string; reason: string }[] };
    expect(st.parked).toEqual([expect.objectContaining({ id, memberId: "m\x9b1\r2", reason: "the service said \x1b[2Jcleared\x07\nnext line\x7f" })]);
  });
});

/**
 * `webhooks serve` (the built CLI, its worker draining every second beside the receiver) while
 * another program holds the inbox's write lock (sqlite3 with BEGIN IMMEDIATE open): nothing of the
 * inbox is waited for on the event loop, so bad-signature POSTs (which need no storage) and
 * `/healthz` still answer promptly, `/healthz` with 503; once the lock is gone, 200 again.
 */
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { request } from "undici";
import { afterAll, expect, it } from "vitest";
import { startSandbox, type Sandbox } from "../../src/sandbox/index.js";
import { startCli, type CliRun } from "../helpers/cli-process.js";
import { holdWriteLock } from "../helpers/inbox-lock.js";
import { TEST_PII_KEY } from "../helpers/temp-store.js";
import { waitUntil } from "../helpers/wait.js";

const SECRET = "whsec-locked-0123456789abcdef";
/** What the test started, stopped after it whatever happened. */
const started: { sandbox?: Sandbox; serve?: CliRun } = {};
const dir = mkdtempSync(join(tmpdir(), "bs-whlock-"));
afterAll(async () => {
  const { serve, sandbox } = started;
  if (serve && serve.child.exitCode === null) serve.child.kill("SIGTERM");
  await serve?.done;
  await sandbox?.close();
  rmSync(dir, { recursive: true, force: true });
});

it("a write lock held on the inbox by sqlite3 never stalls the receiver: 401s and /healthz (503) answer in under 2 s each", async () => {
  const sb = (started.sandbox = await startSandbox({ members: 30, groups: 1, seed: 7 }));
  const db = join(dir, "snap.db");
  const env = { BENEFITS_BASE_URL: sb.baseUrl, BENEFITS_API_KEY: sb.keys.full, BENEFITS_DB: db, BENEFITS_PII_KEY: TEST_PII_KEY.toString(), BENEFITS_WEBHOOK_SECRET: SECRET };
  const first = await startCli(["sync", "--quiet"], env, dir).done;
  expect(first.code, first.stderr).toBe(0);
  const receiver = (started.serve = startCli(["webhooks", "serve", "--port", "0"], env, dir));
  let out = "";
  receiver.child.stdout!.on("data", (d: Buffer) => (out += d.toString()));
  const url = await waitUntil("the listening line", () => {
    const line = out.split("\n").find((l) => l.includes('"webhooks.listening"'));
    return line ? (JSON.parse(line) as { url: string }).url : receiver.child.exitCode !== null ? Promise.reject(new Error(`exited ${receiver.child.exitCode}`)) : undefined;
  });
  const origin = new URL(url).origin;
  const health = async () => {
    const t0 = performance.now();
    const res = await request(`${origin}/healthz`);
    await res.body.dump();
    return { status: res.statusCode, ms: performance.now() - t0 };
  };
  await waitUntil("/healthz to say 200", async () => (await health()).status === 200, 30_000);

  const lock = await holdWriteLock(join(dir, "snap.inbox.db"));
  try {
    // Three seconds of bad-signature POSTs: the worker drains three times meanwhile.
    const body = JSON.stringify({ id: "evt_unsigned", type: "member_update", payload: { id: "m1" } });
    const until = performance.now() + 3000;
    let posts = 0;
    while (performance.now() < until) {
      const t0 = performance.now();
      const res = await request(url, { method: "POST", body, headers: { "x-service-signature": "0".repeat(64) } });
      await res.body.dump();
      expect(res.statusCode).toBe(401);
      // A hang check, not a speed test: stuck on the lock, an answer waits for the busy timeout (5 s).
      expect(performance.now() - t0).toBeLessThan(2000);
      posts++;
    }
    expect(posts).toBeGreaterThan(1);
    const h = await health();
    expect(h.status).toBe(503);
    expect(h.ms).toBeLessThan(2000);
  } finally {
    await lock.release();
  }
  await waitUntil("/healthz to say 200 once the lock is gone", async () => (await health()).status === 200, 30_000);
  receiver.child.kill("SIGTERM");
  expect((await receiver.done).code).toBe(143);
});

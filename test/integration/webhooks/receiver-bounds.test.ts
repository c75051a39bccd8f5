/**
 * The receiver as `webhooks serve` starts it (startReceiver: the inbox's writer thread), on what
 * must stay cheap and bounded: a body announced too large with `Expect: 100-continue` gets its 413
 * before any `100 Continue` (not a 100 then a reset), and `/healthz` answers from the writer
 * thread without writing to the inbox, promptly, and 503 while another program holds its lock.
 */
import BetterSqlite3 from "better-sqlite3";
import { mkdtempSync, rmSync } from "node:fs";
import { connect } from "node:net";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { request } from "undici";
import { afterAll, afterEach, beforeAll, describe, expect, it } from "vitest";
import { loadConfig } from "../../../src/config/index.js";
import { startReceiver, type RunningReceiver } from "../../../src/webhooks/receiver.js";
import { holdWriteLock } from "../../helpers/inbox-lock.js";
import { waitUntil } from "../../helpers/wait.js";

const SECRET = "whsec-bounds-0123456789abcdef";
let dir: string;
beforeAll(() => {
  dir = mkdtempSync(join(tmpdir(), "bs-rbounds-"));
});
afterAll(() => rmSync(dir, { recursive: true, force: true }));
const running: RunningReceiver[] = [];
afterEach(async () => {
  for (const r of running.splice(0)) await r.stop();
});

let n = 0;
async function start(): Promise<RunningReceiver> {
  const db = join(dir, `b${++n}.db`);
  const config = loadConfig({ env: { BENEFITS_DB: db, BENEFITS_WEBHOOK_SECRET: SECRET, BENEFITS_BASE_URL: "http://127.0.0.1:9", BENEFITS_API_KEY: "unused-key" }, cwd: dir });
  const r = await startReceiver(config, { env: {}, cwd: dir, port: 0, host: "127.0.0.1" });
  running.push(r);
  return r;
}

describe("Expect: 100-continue with a body over the limit", () => {
  it("gets 413 and no 100 Continue, the body never asked for", async () => {
    const r = await start();
    const text = await new Promise<string>((resolve, reject) => {
      const s = connect(r.address.port, "127.0.0.1");
      let got = "";
      s.on("data", (d: Buffer) => (got += d.toString()));
      s.on("error", (e) => (got ? resolve(got) : reject(e)));
      s.on("close", () => resolve(got));
      s.on("connect", () => s.write(`POST /webhooks HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\nExpect: 100-continue\r\nContent-Length: ${10 * 1024 * 1024}\r\n\r\n`));
    });
    expect(text).toMatch(/^HTTP\/1\.1 413 /);
    expect(text).not.toContain("100 Continue");
    expect(r.counters.rejected.too_large).toBe(1);
  });
});

/** Milliseconds `f` took to settle, and its value. */
async function timed<T>(f: () => Promise<T>): Promise<{ ms: number; value: T }> {
  const t0 = performance.now();
  const value = await f();
  return { ms: performance.now() - t0, value };
}

const health = async (r: RunningReceiver) => {
  const res = await request(`http://127.0.0.1:${r.address.port}/healthz`);
  return { status: res.statusCode, body: (await res.body.json()) as { ok: boolean; problem?: string } };
};

describe("/healthz is cheap", () => {
  it("a burst of 200 calls answers 200 each and writes nothing to the inbox (its data_version does not move)", async () => {
    const r = await start();
    const watch = new BetterSqlite3(r.inboxPath, { readonly: true });
    try {
      const version = () => watch.pragma("data_version", { simple: true }) as number;
      const before = version();
      const answers = await Promise.all(Array.from({ length: 200 }, () => health(r)));
      expect(answers.every((a) => a.status === 200 && a.body.ok)).toBe(true);
      expect(version()).toBe(before);
    } finally {
      watch.close();
    }
  });
});

describe("the inbox write-locked by another program (sqlite3 holding BEGIN IMMEDIATE)", () => {
  it("bad-signature POSTs and /healthz answer promptly, /healthz 503 within its bound, and 200 once the lock is gone", async () => {
    const r = await start();
    const lock = await holdWriteLock(r.inboxPath);
    try {
      const bad = JSON.stringify({ id: "evt_bad", type: "member_update", payload: { id: "m1" } });
      // At once, so a health probe stuck on the lock on the main thread would hold the POST up too.
      const [h, post] = await Promise.all([
        timed(() => health(r)),
        timed(async () => {
          const res = await request(`http://127.0.0.1:${r.address.port}/webhooks`, { method: "POST", body: bad, headers: { "x-service-signature": "0".repeat(64) } });
          await res.body.dump();
          return res.statusCode;
        }),
      ]);
      // A hang check, not a speed test: stuck on the lock it takes the busy timeout (5 s).
      expect(post.value).toBe(401);
      expect(post.ms).toBeLessThan(2000);
      expect(h.value.status).toBe(503);
      expect(h.value.body.ok).toBe(false);
      expect(h.ms).toBeLessThan(2000);
    } finally {
      await lock.release();
    }
    await waitUntil("/healthz to say 200 once the lock is gone", async () => (await health(r)).status === 200, 30_000);
  });
});

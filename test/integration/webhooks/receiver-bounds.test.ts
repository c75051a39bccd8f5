/**
 * The receiver as `webhooks serve` starts it (startReceiver: the inbox's writer thread), on what
 * must stay cheap and bounded: a body announced too large with `Expect: 100-continue` gets its 413
 * before any `100 Continue` (not a 100 then a reset), and `/healthz` answers from the writer
 * thread without writing to the inbox, promptly, and 503 while another program holds its lock.
 */
import BetterSqlite3 from "better-sqlite3";
import { spawn } from "node:child_process";
import { mkdtempSync, rmSync } from "node:fs";
import { connect } from "node:net";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { request } from "undici";
import { afterAll, afterEach, beforeAll, describe, expect, it } from "vitest";
import { loadConfig } from "../../../src/config/index.js";
import { startReceiver, type RunningReceiver } from "../../../src/webhooks/receiver.js";
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

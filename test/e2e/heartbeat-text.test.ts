/**
 * What `benefits-sync run JOB` prints when a heartbeat ping does not land: which ping, and where
 * to (the scheme, host and port only), never the URL's password or its path (a healthchecks ping
 * URL's path is its token). The real CLI, the sandbox over loopback, and a local ping receiver
 * that answers 500.
 */
import { mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { createServer, type Server } from "node:http";
import type { AddressInfo } from "node:net";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { startSandbox, type Sandbox } from "../../src/sandbox/index.js";
import { startCli } from "../helpers/cli-process.js";

const PII = "heartbeat-text-test-pii-key-0123";
const PASSWORD = "pingpass-7f3a91";
const PATH_TOKEN = "5f0e2c1a-0b7d-4a55-9d8e-ping-token";
let sb: Sandbox;
let dir: string;
let receiver: Server;
let port: number;
const received: string[] = [];

beforeAll(async () => {
  sb = await startSandbox({ members: 10, groups: 2, seed: 5 });
  dir = mkdtempSync(join(tmpdir(), "bsync-heartbeat-"));
  receiver = createServer((req, res) => {
    received.push(req.url ?? "");
    res.statusCode = 500;
    res.end("down");
  });
  await new Promise<void>((r) => receiver.listen(0, "127.0.0.1", r));
  port = (receiver.address() as AddressInfo).port;
});
afterAll(async () => {
  await sb?.close();
  await new Promise((r) => receiver?.close(r));
  if (dir) rmSync(dir, { recursive: true, force: true });
});

describe("benefits-sync run JOB, a heartbeat that fails", () => {
  it("names the ping and the receiver's origin, and neither the URL's password nor its path token", async () => {
    const cwd = mkdtempSync(join(dir, "run-"));
    const heartbeatUrl = `http://hc:${PASSWORD}@127.0.0.1:${port}/ping/${PATH_TOKEN}`;
    writeFileSync(join(cwd, "benefits-sync.config.json"), JSON.stringify({ jobs: { "daily-groups-designs": { heartbeatUrl } } }));
    const env = { BENEFITS_DB: join(cwd, "snap.db"), BENEFITS_PII_KEY: PII, BENEFITS_BASE_URL: sb.baseUrl, BENEFITS_API_KEY: sb.keys.full };
    const r = await startCli(["run", "daily-groups-designs"], env, cwd).done;
    expect(r.code, r.stderr).toBe(0);
    // Both pings reached the receiver (it answered 500 to each).
    expect(received).toEqual([`/ping/${PATH_TOKEN}/start`, `/ping/${PATH_TOKEN}`]);
    const lines = r.stderr.split("\n").filter((l) => l.startsWith("heartbeat:"));
    expect(lines).toEqual([
      `heartbeat: the start ping to http://127.0.0.1:${port} answered 500 (a ping never fails the job; check jobs.daily-groups-designs.heartbeatUrl)`,
      `heartbeat: the success ping to http://127.0.0.1:${port} answered 500 (a ping never fails the job; check jobs.daily-groups-designs.heartbeatUrl)`,
    ]);
    expect(r.stdout + r.stderr).not.toContain(PASSWORD);
    expect(r.stdout + r.stderr).not.toContain(PATH_TOKEN);
  });
});

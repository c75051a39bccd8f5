/**
 * `benefits-sync webhooks serve` as a user runs it (the built CLI): it refuses to start without a
 * usable secret, says where it listens, and on SIGTERM closes the listener, answers the request in
 * hand once its event is committed, writes its counters and exits 143.
 */
import BetterSqlite3 from "better-sqlite3";
import { createHmac } from "node:crypto";
import { existsSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { connect } from "node:net";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { request } from "undici";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { startCli, type CliRun } from "../helpers/cli-process.js";
import { installedEnv, runPrinted, startOnFreePort } from "../helpers/printed-commands.js";
import { closedPort } from "../helpers/ports.js";
import { readmeBlock } from "../helpers/readme-blocks.js";
import { waitUntil } from "../helpers/wait.js";

const SECRET = "whsec-e2e-0123456789abcdef";
/** The service the worker refetches from: nobody answers there, and these tests need no refetch. */
let SERVICE: Record<string, string>;
let dir: string;
beforeAll(async () => {
  dir = mkdtempSync(join(tmpdir(), "bs-whserve-"));
  SERVICE = { BENEFITS_BASE_URL: `http://127.0.0.1:${await closedPort()}`, BENEFITS_API_KEY: "e2e-unused-api-key" };
});
afterAll(() => rmSync(dir, { recursive: true, force: true }));

let stdoutOf: (run: CliRun) => string;
/** Start the receiver on a free port; resolves with its URL once it listens. */
async function serve(env: Record<string, string>, args: string[] = []): Promise<{ run: CliRun; url: string; out: () => string }> {
  const run = startCli(["webhooks", "serve", "--port", "0", ...args], env, dir);
  let out = "";
  run.child.stdout!.on("data", (d: Buffer) => (out += d.toString()));
  stdoutOf = () => out;
  const url = await waitUntil("the listening line", () => {
    const line = out.split("\n").find((l) => l.includes('"webhooks.listening"'));
    return line ? (JSON.parse(line) as { url: string }).url : run.child.exitCode !== null ? Promise.reject(new Error(`exited ${run.child.exitCode}`)) : undefined;
  });
  return { run, url, out: () => out };
}

/** Start the receiver and wait until it exits or listens: one that listens is stopped, and says so. */
async function startOrRefuse(env: Record<string, string>): Promise<{ code: number | null; stdout: string; stderr: string }> {
  const run = startCli(["webhooks", "serve", "--port", "0"], env, dir);
  let out = "";
  run.child.stdout!.on("data", (d: Buffer) => (out += d.toString()));
  await waitUntil("the receiver to exit or listen", () => run.child.exitCode !== null || out.includes('"webhooks.listening"'));
  if (run.child.exitCode === null) run.child.kill("SIGTERM");
  return run.done;
}

const sign = (body: string) => createHmac("sha256", SECRET).update(body).digest("hex");

describe("webhooks serve: refuses to start without a usable secret", () => {
  it("no secret: exit 2, naming BENEFITS_WEBHOOK_SECRET and --insecure-no-signature", async () => {
    const r = await startCli(["webhooks", "serve", "--port", "0"], { BENEFITS_DB: join(dir, "a.db") }, dir).done;
    expect(r.code).toBe(2);
    expect(r.stderr).toMatch(/BENEFITS_WEBHOOK_SECRET/);
    expect(r.stderr).toMatch(/--insecure-no-signature/);
  });

  it("a secret but no service (the worker would apply nothing): exit 2, naming BENEFITS_BASE_URL and BENEFITS_API_KEY", async () => {
    const r = await startOrRefuse({ BENEFITS_DB: join(dir, "a.db"), BENEFITS_WEBHOOK_SECRET: SECRET });
    expect(r.code).toBe(2);
    expect(r.stderr).toMatch(/BENEFITS_BASE_URL/);
    expect(r.stderr).toMatch(/BENEFITS_API_KEY/);
    expect(r.stdout).not.toContain("webhooks.listening");
    expect(existsSync(join(dir, "a.inbox.db"))).toBe(false);
  });

  it("a service but no API key: exit 2, naming BENEFITS_API_KEY", async () => {
    const r = await startOrRefuse({ BENEFITS_DB: join(dir, "a.db"), BENEFITS_WEBHOOK_SECRET: SECRET, BENEFITS_BASE_URL: SERVICE["BENEFITS_BASE_URL"]! });
    expect(r.code).toBe(2);
    expect(r.stderr).toMatch(/BENEFITS_API_KEY/);
    expect(r.stdout).not.toContain("webhooks.listening");
  });

  it("a short secret in a rotation: exit 2, naming its position and not its value", async () => {
    const r = await startCli(["webhooks", "serve", "--port", "0"], { BENEFITS_DB: join(dir, "a.db"), BENEFITS_WEBHOOK_SECRET: `${SECRET},tooshort1` }, dir).done;
    expect(r.code).toBe(2);
    expect(r.stderr).toMatch(/webhookSecrets\[1\].*at least 16 characters/);
    expect(r.stderr + r.stdout).not.toContain("tooshort1");
  });

  it("--insecure-no-signature starts it and accepts an unsigned delivery", async () => {
    const s = await serve({ ...SERVICE, BENEFITS_DB: join(dir, "insecure.db") }, ["--insecure-no-signature"]);
    expect(s.out()).toContain('"signature":"none (--insecure-no-signature)"');
    const res = await request(s.url, { method: "POST", body: JSON.stringify({ id: "evt_u", type: "member_update", payload: { id: "m1" } }) });
    expect(res.statusCode).toBe(200);
    await res.body.dump();
    s.run.child.kill("SIGTERM");
    expect((await s.run.done).code).toBe(143);
  });
});

describe("webhooks serve: SIGTERM", () => {
  it("stops accepting, answers the request in hand once its event is committed, writes its counters, exits 143", async () => {
    const db = join(dir, "term.db");
    const textfile = join(dir, "benefits-sync.prom");
    writeFileSync(join(dir, "term.config.json"), JSON.stringify({ schedule: { textfile } }));
    const s = await serve({ ...SERVICE, BENEFITS_DB: db, BENEFITS_WEBHOOK_SECRET: SECRET }, ["--config", "term.config.json"]);
    const port = Number(new URL(s.url).port);
    const body = JSON.stringify({ id: "evt_in_hand", type: "member_update", payload: { id: "m42" } });
    // The request in hand: the receiver has read its head (it answers 100 Continue to say so) and
    // half its body before the signal.
    const sock = connect(port, "127.0.0.1");
    let answer = "";
    sock.on("data", (d: Buffer) => (answer += d.toString()));
    const closed = new Promise((r) => sock.once("close", r));
    await new Promise((r) => sock.once("connect", r));
    const half = Math.floor(body.length / 2);
    sock.write(`POST /webhooks HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\nExpect: 100-continue\r\nX-Service-Signature: ${sign(body)}\r\nContent-Length: ${body.length}\r\n\r\n`);
    await waitUntil("the receiver to read the head (100 Continue)", () => answer.startsWith("HTTP/1.1 100 Continue\r\n\r\n"));
    sock.write(body.slice(0, half));
    s.run.child.kill("SIGTERM");
    // The listener closes: a new connection is refused.
    await waitUntil("the listener to close", () => new Promise<boolean>((resolve) => {
      const probe = connect(port, "127.0.0.1");
      probe.once("connect", () => (probe.destroy(), resolve(false)));
      probe.once("error", (e: NodeJS.ErrnoException) => resolve(e.code === "ECONNREFUSED"));
    }));
    expect(s.run.child.exitCode).toBeNull();
    sock.write(body.slice(half));
    // Answered, and the connection closed with it: no idle keep-alive holds the stop up.
    await closed;
    expect(answer).toMatch(/^HTTP\/1\.1 100 Continue\r\n\r\nHTTP\/1\.1 200 /);
    expect(answer.toLowerCase()).toContain("connection: close");
    const done = await s.run.done;
    expect(done.code).toBe(143);
    const inbox = new BetterSqlite3(join(dir, "term.inbox.db"), { readonly: true });
    expect(inbox.prepare("SELECT event_id FROM inbox_events").pluck().all()).toEqual(["evt_in_hand"]);
    inbox.close();
    const prom = readFileSync(join(dir, "benefits-sync-webhooks.prom"), "utf8");
    expect(prom).toContain("benefits_sync_webhooks_accepted_total 1\n");
    expect(prom).toContain('benefits_sync_webhooks_secret_matched_total{secret="0"} 1\n');
    expect(prom).toContain('benefits_sync_webhooks_rejected_total{reason="bad_signature"} 0\n');
    expect(stdoutOf(s.run)).toContain('"event":"webhooks.stopped"');
  });
});

describe("README: webhooks: receive", () => {
  it("runs as printed (port 8787 swapped for a free one): the receiver in one terminal, its health check in another", async () => {
    const home = join(dir, "readme");
    const env = { ...installedEnv(home), ...SERVICE, BENEFITS_WEBHOOK_SECRET: SECRET };
    const { server, lines, says } = await startOnFreePort(readmeBlock("webhooks: receive"), 8787, home, env, '"webhooks.listening"');
    const r = runPrinted(lines[1]!, home, env);
    expect(r.status, `${lines[1]} (${says})\n${r.stderr}`).toBe(0);
    expect(JSON.parse(r.stdout)).toEqual({ ok: true });
    expect(await server.stop()).toBe(143);
    // The inbox is beside the default snapshot, in the working directory.
    expect(existsSync(join(home, "benefits-sync.inbox.db"))).toBe(true);
  });
});

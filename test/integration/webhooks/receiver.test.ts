/**
 * The receiver over real loopback HTTP(S) with a real inbox file: every answer the sender relies
 * on (2xx only once committed, 401, 400, 413 unread, 405, 404, 503 on a full disk), group commit,
 * HTTPS with a certificate made by openssl here, and a 2xx while a sync holds the snapshot's writer.
 */
import BetterSqlite3 from "better-sqlite3";
import { execFileSync } from "node:child_process";
import { createHmac } from "node:crypto";
import { mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { connect, type Socket } from "node:net";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { Agent, request } from "undici";
import { afterAll, afterEach, beforeAll, describe, expect, it } from "vitest";
import { loadConfig } from "../../../src/config/index.js";
import { startSandbox } from "../../../src/sandbox/index.js";
import { openDatabase } from "../../../src/store/file/database.js";
import { applyWebhooksOnce } from "../../../src/webhooks/apply-job.js";
import { ReceiverCounters } from "../../../src/webhooks/counters.js";
import { Inbox } from "../../../src/webhooks/inbox.js";
import { portalAuthFrom, type PortalAuthConfig } from "../../../src/webhooks/portal-auth.js";
import { startReceiver } from "../../../src/webhooks/receiver.js";
import { createReceiver, type Receiver } from "../../../src/webhooks/server.js";
import { SignatureVerifier } from "../../../src/webhooks/verify.js";
import { waitUntil } from "../../helpers/wait.js";

const SECRET = "whsec-test-0123456789abcdef";
const OLD = "whsec-old-0123456789abcdef";
const sign = (body: string, secret = SECRET) => createHmac("sha256", secret).update(body).digest("hex");
const event = (id: string, member = `mem_${id}`, type = "member_update") => JSON.stringify({ id, type, payload: { id: member } });

let dir: string;
beforeAll(() => {
  dir = mkdtempSync(join(tmpdir(), "bs-receiver-"));
});
afterAll(() => rmSync(dir, { recursive: true, force: true }));

interface Running {
  url: string;
  origin: string;
  port: number;
  inboxPath: string;
  inbox: Inbox;
  counters: ReceiverCounters;
  receiver: Receiver;
}
const running: Running[] = [];
afterEach(async () => {
  for (const r of running.splice(0)) {
    await r.receiver.stop(100);
    r.inbox.close();
  }
});

let n = 0;
async function start(opts: { auth?: PortalAuthConfig; env?: Record<string, string>; folder?: string; windowMs?: number; maxGroup?: number; tls?: { cert: Buffer; key: Buffer } } = {}): Promise<Running> {
  const inboxPath = join(opts.folder ?? dir, `r${++n}.inbox.db`);
  const inbox = Inbox.open(inboxPath);
  const counters = new ReceiverCounters(2);
  const receiver = createReceiver({
    path: "/webhooks",
    maxBodyBytes: 65_536,
    verifier: new SignatureVerifier([OLD, SECRET]),
    auth: opts.auth ? portalAuthFrom(opts.auth, opts.env ?? {}) : null,
    inbox,
    counters,
    tls: opts.tls,
    windowMs: opts.windowMs,
    maxGroup: opts.maxGroup,
  });
  const addr = await receiver.listen(0, "127.0.0.1");
  const origin = `${opts.tls ? "https" : "http"}://127.0.0.1:${addr.port}`;
  const r = { url: `${origin}/webhooks`, origin, port: addr.port, inboxPath, inbox, counters, receiver };
  running.push(r);
  return r;
}

const stored = (path: string) => {
  const db = new BetterSqlite3(path, { readonly: true });
  try {
    return db.prepare("SELECT event_id AS id, state, member_id AS memberId FROM inbox_events ORDER BY event_id").all() as { id: string; state: string; memberId: string | null }[];
  } finally {
    db.close();
  }
};

async function post(url: string, body: string, headers: Record<string, string> = {}, dispatcher?: Agent) {
  const res = await request(url, { method: "POST", body, headers: { "content-type": "application/json", ...headers }, ...(dispatcher ? { dispatcher } : {}) });
  return { status: res.statusCode, body: await res.body.text() };
}

/** A raw HTTP/1.1 exchange: what the client wrote, then everything the server sent until it closed. */
function raw(port: number, write: (s: Socket) => void): Promise<{ text: string; closed: boolean }> {
  return new Promise((resolve, reject) => {
    const s = connect(port, "127.0.0.1");
    let text = "";
    s.on("data", (d: Buffer) => (text += d.toString()));
    s.on("error", (e: NodeJS.ErrnoException) => (text ? resolve({ text, closed: true }) : reject(e)));
    s.on("close", () => resolve({ text, closed: true }));
    s.on("connect", () => write(s));
  });
}

describe("POST /webhooks: 2xx only once the event is committed", () => {
  it("stores a signed event before answering 200, and a repeated id once (200 again)", async () => {
    const r = await start();
    const body = event("evt_1");
    const first = await post(r.url, body, { "x-service-signature": sign(body) });
    // The answer has arrived: the event must be in the file, as another process would read it.
    expect(stored(r.inboxPath)).toEqual([{ id: "evt_1", state: "pending", memberId: "mem_evt_1" }]);
    expect(first).toEqual({ status: 200, body: '{"accepted":true,"duplicate":false}\n' });
    const again = await post(r.url, body, { "x-service-signature": `sha256=${Buffer.from(sign(body), "hex").toString("base64")}` });
    expect(again.status).toBe(200);
    expect(JSON.parse(again.body)).toEqual({ accepted: true, duplicate: true });
    expect(stored(r.inboxPath).length).toBe(1);
    expect(r.counters).toMatchObject({ received: 2, accepted: 1, duplicates: 1, secretMatched: [0, 2] });
  });

  it("says which secret of a rotation matched", async () => {
    const r = await start();
    const body = event("evt_old");
    expect((await post(r.url, body, { "x-service-signature": sign(body, OLD) })).status).toBe(200);
    expect(r.counters.secretMatched).toEqual([1, 0]);
  });

  it("records another event type as ignored and answers 200, so the sender stops", async () => {
    const r = await start();
    const body = JSON.stringify({ id: "evt_g", type: "group_update", payload: { id: "grp_1" } });
    expect((await post(r.url, body, { "x-service-signature": sign(body) })).status).toBe(200);
    expect(stored(r.inboxPath)).toEqual([{ id: "evt_g", state: "ignored", memberId: null }]);
    expect(r.counters.ignored).toBe(1);
  });

  it("401 for a missing or wrong signature, and nothing stored", async () => {
    const r = await start();
    const body = event("evt_2");
    expect((await post(r.url, body)).status).toBe(401);
    expect((await post(r.url, body, { "x-service-signature": sign(event("evt_3")) })).status).toBe(401);
    expect((await post(r.url, body, { "x-service-signature": sign(body, "another-secret-0123456789") })).status).toBe(401);
    // (Spaces around a header's value are not part of it in HTTP; one inside is.)
    expect((await post(r.url, body, { "x-service-signature": `${sign(body).slice(0, 10)} ${sign(body).slice(10)}` })).status).toBe(401);
    expect(stored(r.inboxPath)).toEqual([]);
    expect(r.counters.rejected).toMatchObject({ missing_signature: 1, bad_signature: 3 });
  });

  it("400 for a body that is not JSON or not an event (signed, so only the shape is wrong)", async () => {
    const r = await start();
    for (const body of ["not json", "[]", '{"id":"e","type":"member_update"}', '{"id":"e","type":"member_update","payload":{}}', '{"id":"","type":"member_update","payload":{"id":"m"}}', '{"type":"member_update","payload":{"id":"m"}}']) {
      const res = await post(r.url, body, { "x-service-signature": sign(body) });
      expect(res.status, body).toBe(400);
    }
    expect(stored(r.inboxPath)).toEqual([]);
    expect(r.counters.rejected.bad_request).toBe(6);
  });

  it("405 for another method, 404 for another path, 200 from /healthz", async () => {
    const r = await start();
    expect((await request(r.url, { method: "GET" })).statusCode).toBe(405);
    expect((await request(r.url, { method: "PUT", body: "{}" })).statusCode).toBe(405);
    expect((await request(`${r.origin}/other`, { method: "POST", body: "{}" })).statusCode).toBe(404);
    const health = await request(`${r.origin}/healthz`);
    expect(health.statusCode).toBe(200);
    expect(await health.body.json()).toEqual({ ok: true });
  });
});

describe("the portal's Auth, as configured", () => {
  const cases: [string, PortalAuthConfig, Record<string, string>, Record<string, string>, Record<string, string>[]][] = [
    ["apiKey", { type: "apiKey", header: "x-portal-key", keyEnv: "PORTAL_KEY" }, { PORTAL_KEY: "portal-key-123456" }, { "x-portal-key": "portal-key-123456" }, [{}, { "x-portal-key": "portal-key-12345" }, { "x-api-key": "portal-key-123456" }]],
    ["bearer", { type: "bearer", tokenEnv: "PORTAL_TOKEN" }, { PORTAL_TOKEN: "tok-abcdef" }, { authorization: "Bearer tok-abcdef" }, [{}, { authorization: "Bearer tok-abcdeg" }, { authorization: "Basic tok-abcdef" }, { authorization: "Bearer  " }]],
    [
      "basic",
      { type: "basic", username: "portal", passwordEnv: "PORTAL_PASSWORD" },
      { PORTAL_PASSWORD: "pw:with-colon" },
      { authorization: `Basic ${Buffer.from("portal:pw:with-colon").toString("base64")}` },
      [{}, { authorization: `Basic ${Buffer.from("portal:pw:with-colo").toString("base64")}` }, { authorization: `Basic ${Buffer.from("portaL:pw:with-colon").toString("base64")}` }, { authorization: `Basic ${Buffer.from("portal:pw:with-colon").toString("base64")}!` }],
    ],
  ];
  it.each(cases)("%s: the right one is accepted, a missing or wrong one gets 401", async (_name, auth, env, good, bads) => {
    const r = await start({ auth, env });
    const body = event(`evt_${_name}`);
    const sig = { "x-service-signature": sign(body) };
    for (const bad of bads) expect((await post(r.url, body, { ...sig, ...bad })).status, JSON.stringify(bad)).toBe(401);
    expect(stored(r.inboxPath)).toEqual([]);
    expect((await post(r.url, body, { ...sig, ...good })).status).toBe(200);
    expect(r.counters.rejected.unauthorized).toBe(bads.length);
  });

  it("refuses to start when the Auth's variable is unset, naming it", () => {
    expect(() => portalAuthFrom({ type: "bearer", tokenEnv: "PORTAL_TOKEN" }, {})).toThrow(/webhooks\.auth\.tokenEnv: the environment variable PORTAL_TOKEN is not set/);
  });
});

describe("limits: 413 without reading the rest", () => {
  it("a Content-Length over 64 KiB is refused before its body arrives, and the connection closed", async () => {
    const r = await start();
    // Only the head and 10 bytes are ever sent: a server that read the whole body would never answer.
    const res = await raw(r.port, (s) => s.write(`POST /webhooks HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\nContent-Length: 1000000\r\n\r\n{"id":"x",`));
    expect(res.text).toMatch(/^HTTP\/1\.1 413 /);
    expect(res.text.toLowerCase()).toContain("connection: close");
    expect(res.closed).toBe(true);
    expect(r.counters.rejected.too_large).toBe(1);
  });

  it("a chunked body is counted as it arrives: past 64 KiB it gets 413 and the connection is closed", async () => {
    const r = await start();
    const chunk = "x".repeat(8192);
    const res = await raw(r.port, (s) => {
      s.write("POST /webhooks HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\nTransfer-Encoding: chunked\r\n\r\n");
      // 72 KiB and no last chunk: the body never ends, so only counting can refuse it.
      for (let i = 0; i < 9; i++) s.write(`${chunk.length.toString(16)}\r\n${chunk}\r\n`);
    });
    expect(res.text).toMatch(/^HTTP\/1\.1 413 /);
    expect(res.closed).toBe(true);
    expect(stored(r.inboxPath)).toEqual([]);
  });

  it("a body of exactly 64 KiB is read and accepted; one byte more gets 413", async () => {
    const r = await start();
    const body = JSON.stringify({ id: "e", type: "member_update", payload: { id: "m" } });
    const padded = body + " ".repeat(65_536 - Buffer.byteLength(body));
    expect(Buffer.byteLength(padded)).toBe(65_536);
    expect((await post(r.url, padded, { "x-service-signature": sign(padded) })).status).toBe(200);
    const over = `${padded} `;
    expect((await post(r.url, over, { "x-service-signature": sign(over) })).status).toBe(413);
  });
});

describe("a full disk under the inbox: 503 (the sender retries), never a 4xx", () => {
  const mounts: string[] = [];
  afterAll(() => {
    for (const m of mounts) execFileSync("umount", ["-l", m]);
  });

  it("answers 503 to deliveries and to /healthz while the inbox cannot be written, and 200 once it can", async () => {
    const disk = join(dir, "small");
    mkdirSync(disk);
    execFileSync("mount", ["-t", "tmpfs", "-o", "size=2m", "tmpfs", disk]);
    mounts.push(disk);
    const r = await start({ folder: disk });
    const ok = event("evt_before");
    expect((await post(r.url, ok, { "x-service-signature": sign(ok) })).status).toBe(200);
    // Fill the file system to the last block.
    const filler = join(disk, "filler");
    try {
      execFileSync("dd", ["if=/dev/zero", `of=${filler}`, "bs=4k"], { stdio: "ignore" });
    } catch {
      // dd stops with an error at ENOSPC: that is the point.
    }
    const body = event("evt_full");
    const res = await post(r.url, body, { "x-service-signature": sign(body) });
    expect(res.status).toBe(503);
    expect((await request(`${r.origin}/healthz`)).statusCode).toBe(503);
    expect(r.counters.rejected.unavailable).toBe(1);
    rmSync(filler);
    expect((await request(`${r.origin}/healthz`)).statusCode).toBe(200);
    expect((await post(r.url, body, { "x-service-signature": sign(body) })).status).toBe(200);
    expect(stored(r.inboxPath).map((e) => e.id)).toEqual(["evt_before", "evt_full"]);
  });
});

describe("group commit", () => {
  it("64 concurrent deliveries share commits, and each is in the file when its 200 arrives", async () => {
    // Groups close by size (16), never by the clock: the window is far longer than the test, so
    // how late a loaded machine delivers them cannot split a group. 64 deliveries, 4 commits.
    const r = await start({ windowMs: 3_600_000, maxGroup: 16 });
    const agent = new Agent({ connections: 64 });
    const ids = Array.from({ length: 64 }, (_, i) => `evt_g${String(i).padStart(2, "0")}`);
    const seenAtAnswer = await Promise.all(
      ids.map(async (id) => {
        const body = event(id);
        const res = await post(r.url, body, { "x-service-signature": sign(body) }, agent);
        expect(res.status).toBe(200);
        return stored(r.inboxPath).some((e) => e.id === id);
      }),
    );
    await agent.close();
    expect(seenAtAnswer.every(Boolean)).toBe(true);
    expect(r.counters.accepted).toBe(64);
    expect(r.counters.commits).toBe(4);
  });
});

describe("HTTPS with a certificate and key", () => {
  it("serves deliveries over TLS with a certificate made by openssl", async () => {
    const tlsDir = join(dir, "tls");
    mkdirSync(tlsDir);
    const [cert, key] = [join(tlsDir, "cert.pem"), join(tlsDir, "key.pem")];
    execFileSync("openssl", ["req", "-x509", "-newkey", "rsa:2048", "-nodes", "-keyout", key, "-out", cert, "-days", "1", "-subj", "/CN=127.0.0.1", "-addext", "subjectAltName=IP:127.0.0.1"], { stdio: "ignore" });
    const r = await start({ tls: { cert: readFileSync(cert), key: readFileSync(key) } });
    expect(r.url.startsWith("https://")).toBe(true);
    const agent = new Agent({ connect: { ca: readFileSync(cert) } });
    const body = event("evt_tls");
    expect((await post(r.url, body, { "x-service-signature": sign(body) }, agent)).status).toBe(200);
    // Plain HTTP to the TLS port is not a delivery.
    await expect(request(r.url.replace("https:", "http:"), { method: "POST", body, headers: { "x-service-signature": sign(body) } }).then((x) => x.statusCode)).rejects.toThrow();
    await agent.close();
    expect(stored(r.inboxPath).map((e) => e.id)).toEqual(["evt_tls"]);
    writeFileSync(join(tlsDir, "done"), "");
  });
});

describe("a sync holding the snapshot's writer does not hold up a 2xx", () => {
  it("while another connection holds BEGIN IMMEDIATE on the snapshot, signed deliveries get 200 and are in the inbox, the worker beside waiting; released, the worker applies them", async () => {
    const sb = await startSandbox({ members: 20, groups: 1, seed: 23 });
    const folder = mkdtempSync(join(dir, "locked-"));
    const db = join(folder, "snap.db");
    const config = loadConfig({ env: { BENEFITS_DB: db, BENEFITS_BASE_URL: sb.baseUrl, BENEFITS_API_KEY: sb.keys.full, BENEFITS_PII_KEY: "receiver-lock-pii-key-0123456789", BENEFITS_WEBHOOK_SECRET: SECRET }, cwd: folder });
    openDatabase(db).close();
    const [first, second] = [...sb.iterate("members")].slice(0, 2).map((m) => m.id);
    const r = await startReceiver(config, { env: {}, cwd: folder, port: 0 });
    // The writer a full walk holds for minutes, taken while the receiver runs and kept until both answers are in.
    const holder = new BetterSqlite3(db);
    holder.exec("BEGIN IMMEDIATE");
    let drain: Promise<unknown> | undefined;
    try {
      const a = event("evt_locked_a", first);
      expect((await post(r.url, a, { "x-service-signature": sign(a) })).status).toBe(200);
      expect(holder.inTransaction).toBe(true);
      expect(stored(r.inboxPath)).toEqual([{ id: "evt_locked_a", state: "pending", memberId: first }]);
      // The worker `webhooks serve` runs beside the receiver: an event is due, so it reaches for the snapshot and waits.
      drain = applyWebhooksOnce(config);
      const b = event("evt_locked_b", second);
      expect((await post(r.url, b, { "x-service-signature": sign(b) })).status).toBe(200);
      expect(holder.inTransaction).toBe(true);
      expect(stored(r.inboxPath).map((e) => [e.id, e.state])).toEqual([
        ["evt_locked_a", "pending"],
        ["evt_locked_b", "pending"],
      ]);
    } finally {
      holder.exec("ROLLBACK");
      holder.close();
    }
    try {
      await drain;
      // Released: the worker applies both (a drain that gave up waiting left them pending: the next one takes them).
      await waitUntil("both events applied", async () => {
        if (stored(r.inboxPath).every((e) => e.state === "applied")) return true;
        await applyWebhooksOnce(config);
        return false;
      });
      const snap = new BetterSqlite3(db, { readonly: true });
      try {
        expect((snap.prepare("SELECT id FROM members ORDER BY id").pluck().all() as string[]).sort()).toEqual([first, second].sort());
      } finally {
        snap.close();
      }
    } finally {
      await r.stop();
      await sb.close();
    }
  });
});

/**
 * The receiver against the sandbox's own sender (src/sandbox/webhooks.ts: lowercase hex, bearer
 * Auth, every event sent twice and each day's batch in reverse order): after a simulated day, every
 * event the sandbox recorded as delivered successfully is in the inbox exactly once, with its member.
 */
import BetterSqlite3 from "better-sqlite3";
import { mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { request } from "undici";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { startSandbox, type Sandbox } from "../../src/sandbox/index.js";
import { startCli, type CliRun } from "../helpers/cli-process.js";
import { waitUntil } from "../helpers/wait.js";

const SECRET = "whsec-sandbox-0123456789abcdef";
const TOKEN = "portal-bearer-token-42";
let sb: Sandbox;
let dir: string;
let receiver: CliRun;
let url: string;

beforeAll(async () => {
  sb = await startSandbox({ members: 800, groups: 4, seed: 23, webhookDelayMs: 50 });
  dir = mkdtempSync(join(tmpdir(), "bs-whsb-"));
  writeFileSync(join(dir, "benefits-sync.config.json"), JSON.stringify({ webhooks: { auth: { type: "bearer", tokenEnv: "PORTAL_TOKEN" } } }));
  // The service the worker refetches from: the sandbox (no snapshot here, so it applies nothing).
  receiver = startCli(["webhooks", "serve", "--port", "0"], { BENEFITS_BASE_URL: sb.baseUrl, BENEFITS_API_KEY: sb.keys.full, BENEFITS_DB: join(dir, "snap.db"), BENEFITS_WEBHOOK_SECRET: SECRET, PORTAL_TOKEN: TOKEN }, dir);
  let out = "";
  receiver.child.stdout!.on("data", (d: Buffer) => (out += d.toString()));
  url = await waitUntil("the listening line", () => {
    const line = out.split("\n").find((l) => l.includes('"webhooks.listening"'));
    return line ? (JSON.parse(line) as { url: string }).url : undefined;
  });
});
afterAll(async () => {
  if (receiver?.child.exitCode === null) receiver.child.kill("SIGTERM");
  await receiver?.done;
  await sb?.close();
  rmSync(dir, { recursive: true, force: true });
});

const control = async (path: string, body?: unknown) => {
  const res = await request(`${sb.baseUrl}${path}`, { method: body === undefined ? "GET" : "POST", ...(body === undefined ? {} : { body: JSON.stringify(body), headers: { "content-type": "application/json" } }) });
  expect(res.statusCode, path).toBeLessThan(300);
  return (await res.body.json()) as { data?: unknown } & Record<string, unknown>;
};

describe("webhooks serve with the sandbox's sender (duplicates and out of order on)", () => {
  it("a simulated day: every event delivered successfully is in the inbox once, with its member", async () => {
    await control("/_sandbox/webhooks/configs", { url, auth: { type: "bearer", token: TOKEN }, secret: SECRET, duplicate: true, outOfOrder: true });
    const day = (await control("/_sandbox/advance", {})) as unknown as { changes: { members: { inserted: string[]; updated: string[] } } };
    await sb.webhooks.idle();
    const deliveries = (await control("/_sandbox/webhooks/deliveries")).data as { eventId: string; state: string; attempts: { status: number | null }[] }[];
    const events = (await control("/_sandbox/webhooks/events")).data as { id: string; payload: { id: string } }[];
    const changed = new Set([...day.changes.members.inserted, ...day.changes.members.updated]);
    expect(changed.size).toBeGreaterThan(0);
    // Two deliveries of each event, each answered 2xx the first time.
    expect(deliveries.length).toBe(2 * events.length);
    expect(deliveries.filter((d) => d.state !== "successful")).toEqual([]);

    const db = new BetterSqlite3(join(dir, "snap.inbox.db"), { readonly: true });
    const rows = db.prepare("SELECT event_id AS id, member_id AS memberId, state FROM inbox_events").all() as { id: string; memberId: string; state: string }[];
    db.close();
    const delivered = new Set(deliveries.filter((d) => d.state === "successful").map((d) => d.eventId));
    expect(rows.map((r) => r.id).sort()).toEqual([...delivered].sort());
    expect(new Set(rows.map((r) => r.id)).size).toBe(rows.length);
    const memberOf = new Map(events.map((e) => [e.id, e.payload.id]));
    for (const r of rows) expect(r).toEqual({ id: r.id, memberId: memberOf.get(r.id), state: "pending" });
    // Every member the day changed was announced (the sender also announces members whose coverage changed).
    const announced = new Set(rows.map((r) => r.memberId));
    expect([...changed].filter((m) => !announced.has(m))).toEqual([]);

    // Stopped: its whole output (the log lines, any error) never carries the secret or the portal's token.
    receiver.child.kill("SIGTERM");
    const done = await receiver.done;
    expect(done.code).toBe(143);
    expect(done.stdout).toContain(`"accepted":${rows.length}`);
    for (const secret of [SECRET, TOKEN]) expect(done.stdout + done.stderr).not.toContain(secret);
  });
});

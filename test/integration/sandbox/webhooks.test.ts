import { createHmac } from "node:crypto";
import { createServer, type IncomingHttpHeaders, type Server } from "node:http";
import type { AddressInfo } from "node:net";
import { request } from "undici";
import { afterAll, afterEach, beforeAll, describe, expect, it } from "vitest";
import { signBody, startSandbox, type Sandbox } from "../../../src/sandbox/index.js";
import { waitUntil } from "../../helpers/wait.js";
import { clientFor } from "./walk-helpers.js";

interface Received {
  headers: IncomingHttpHeaders;
  body: string;
}

/** A partner endpoint on port 0 that answers with the scripted statuses, then 200. */
async function receiver(statuses: number[] = []): Promise<{ url: string; got: Received[]; server: Server }> {
  const got: Received[] = [];
  const server = createServer((req, res) => {
    let body = "";
    req.on("data", (c: Buffer) => (body += c.toString("utf8")));
    req.on("end", () => {
      got.push({ headers: req.headers, body });
      res.statusCode = statuses.shift() ?? 200;
      res.end();
    });
  });
  await new Promise<void>((r) => server.listen(0, "127.0.0.1", r));
  return { url: `http://127.0.0.1:${(server.address() as AddressInfo).port}/hook`, got, server };
}

let sb: Sandbox;
const servers: Server[] = [];
beforeAll(async () => {
  sb = await startSandbox({ seed: 61, members: 600, webhookDelayMs: 30 });
});
afterEach(() => {
  for (const s of servers.splice(0)) s.close();
});
afterAll(() => sb.close());

describe("webhooks", () => {
  it("sends one signed member_update per changed or new member, with the configured auth", async () => {
    const r = await receiver();
    servers.push(r.server);
    sb.webhooks.addConfig({ url: r.url, auth: { type: "bearer", token: "partner-token" }, secret: "It's a Secret to Everybody" });
    const cs = await sb.advance();
    await sb.webhooks.idle();
    const bodies = r.got.map((g) => JSON.parse(g.body) as { id: string; type: string; payload: { id: string } });
    const memberIds = new Set(bodies.map((b) => b.payload.id));
    for (const id of [...cs.changes.members.inserted, ...cs.changes.members.updated]) expect(memberIds.has(id)).toBe(true);
    expect(bodies.length).toBe(memberIds.size);
    for (const g of r.got) {
      const b = JSON.parse(g.body) as Record<string, unknown>;
      expect(Object.keys(b).sort()).toEqual(["id", "payload", "type"]);
      expect(b.type).toBe("member_update");
      expect(g.headers.authorization).toBe("Bearer partner-token");
      expect(g.headers["x-service-signature"]).toBe(createHmac("sha256", "It's a Secret to Everybody").update(g.body).digest("hex"));
      // No PHI in the body: an id only.
      expect(g.body).not.toMatch(/\d{3}-\d{2}-\d{4}/);
    }
    expect(signBody("It's a Secret to Everybody", "Hello, World!")).toBe("757107ea0eb2509fc211221cce984b8a37570b6d7586c22c46f4379c8b043e17");
  });

  it("API writes emit events too; apiKey and basic auth are sent as configured", async () => {
    const a = await receiver();
    const b = await receiver();
    servers.push(a.server, b.server);
    sb.webhooks.addConfig({ url: a.url, auth: { type: "apiKey", key: "k-123", header: "X-Partner-Key" } });
    sb.webhooks.addConfig({ url: b.url, auth: { type: "basic", username: "u", password: "p" } });
    const client = clientFor(sb);
    const member = [...sb.iterate("members")][3];
    await client.patchMember(member?.id as string, { phone: "+15550001111" });
    await client.close();
    // The write's event is announced on the sandbox's next tick; idle() only covers deliveries begun.
    await waitUntil("the write's webhook event", () => sb.webhooks.events().some((e) => e.payload.id === member?.id));
    await sb.webhooks.idle();
    expect(a.got.map((g) => (JSON.parse(g.body) as { payload: { id: string } }).payload.id)).toEqual([member?.id]);
    expect(a.got[0]?.headers["x-partner-key"]).toBe("k-123");
    expect(a.got[0]?.headers["x-service-signature"]).toBeUndefined();
    expect(b.got[0]?.headers.authorization).toBe(`Basic ${Buffer.from("u:p").toString("base64")}`);
  });
});

describe("webhook delivery records and retries", () => {
  it("retries a failing endpoint up to maxAttempts with the fixed delay, then stays failed; a manual retry resends the same event id", async () => {
    const sb2 = await startSandbox({ seed: 62, members: 300, webhookDelayMs: 40 });
    try {
      const r = await receiver([500, 503, 500, 500, 500, 500, 500, 500, 500]);
      servers.push(r.server);
      sb2.webhooks.addConfig({ url: r.url, auth: { type: "bearer", token: "t" }, maxAttempts: 3 });
      const client = clientFor(sb2);
      const id = [...sb2.iterate("members")][0]?.id as string;
      await client.patchMember(id, { email: "a@b.example.com" });
      await client.close();
      await waitUntil("the write's webhook delivery", () => sb2.webhooks.deliveries().length > 0);
      await sb2.webhooks.idle();
      const [d] = sb2.webhooks.deliveries();
      const at = (d?.attempts ?? []).map((x) => Date.parse(x.at));
      // A fixed delay (40 ms here) between attempts, no exponential backoff. Lower bounds only: a
      // loaded machine makes the gaps longer, never shorter.
      expect((at[1] ?? 0) - (at[0] ?? 0)).toBeGreaterThanOrEqual(39);
      expect((at[2] ?? 0) - (at[1] ?? 0)).toBeGreaterThanOrEqual(39);
      expect(d).toMatchObject({ state: "failed", final: true, manual: false });
      expect(d?.attempts.map((x) => x.status)).toEqual([500, 503, 500]);
      expect(r.got).toHaveLength(3);
      const eventId = (JSON.parse(r.got[0]?.body ?? "{}") as { id: string }).id;
      expect(new Set(r.got.map((g) => (JSON.parse(g.body) as { id: string }).id))).toEqual(new Set([eventId]));

      // Manual retry from the control route: new delivery record, same event id; earlier ones stay.
      r.got.length = 0;
      const res = await request(`${sb2.baseUrl}/_sandbox/webhooks/events/${eventId}/retry`, { method: "POST" });
      expect(res.statusCode).toBe(202);
      await res.body.dump();
      await sb2.webhooks.idle();
      expect((JSON.parse(r.got[0]?.body ?? "{}") as { id: string }).id).toBe(eventId);
      const all = sb2.webhooks.deliveries();
      expect(all).toHaveLength(2);
      expect(all[1]).toMatchObject({ eventId, manual: true });
      const listed = await request(`${sb2.baseUrl}/_sandbox/webhooks/deliveries`);
      expect(((await listed.body.json()) as { data: unknown[] }).data).toHaveLength(2);
      const missing = await request(`${sb2.baseUrl}/_sandbox/webhooks/events/nope/retry`, { method: "POST" });
      expect(missing.statusCode).toBe(404);
      await missing.body.dump();
    } finally {
      await sb2.close();
    }
  });

  it("delivers duplicates and out of order on demand; a connection error counts as a failed attempt", async () => {
    const sb3 = await startSandbox({ seed: 63, members: 2000, webhookDelayMs: 10 });
    try {
      const inOrder = await receiver();
      const shuffled = await receiver();
      servers.push(inOrder.server, shuffled.server);
      sb3.webhooks.addConfig({ url: inOrder.url, auth: { type: "bearer", token: "t" } });
      const res = await request(`${sb3.baseUrl}/_sandbox/webhooks/configs`, {
        method: "POST",
        body: JSON.stringify({ url: shuffled.url, auth: { type: "bearer", token: "t" }, duplicate: true, outOfOrder: true }),
      });
      expect(res.statusCode).toBe(201);
      await res.body.dump();
      sb3.webhooks.addConfig({ url: "http://127.0.0.1:1/closed", auth: { type: "bearer", token: "t" }, maxAttempts: 2 });
      await sb3.advance();
      await sb3.webhooks.idle();
      const ids = (r: { got: Received[] }) => r.got.map((g) => (JSON.parse(g.body) as { id: string }).id);
      expect(ids(inOrder).length).toBeGreaterThan(2);
      expect(ids(shuffled)).toHaveLength(ids(inOrder).length * 2);
      expect(new Set(ids(shuffled))).toEqual(new Set(ids(inOrder)));
      expect(ids(shuffled).filter((_, i) => i % 2 === 0)).toEqual([...ids(inOrder)].reverse());
      const dead = sb3.webhooks.deliveries().filter((d) => d.attempts[0]?.status === null);
      expect(dead.length).toBeGreaterThan(0);
      expect(dead.every((d) => d.state === "failed" && d.final && d.attempts.length === 2 && d.attempts[0]?.error)).toBe(true);
      const bad = await request(`${sb3.baseUrl}/_sandbox/webhooks/configs`, { method: "POST", body: JSON.stringify({ url: "nope", auth: { type: "magic" } }) });
      expect(bad.statusCode).toBe(400);
      await bad.body.dump();
    } finally {
      await sb3.close();
    }
  });
});

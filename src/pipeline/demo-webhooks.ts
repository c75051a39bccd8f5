/**
 * The demo's webhook part: the sandbox announces a second simulated day by its own sender
 * (duplicates and out-of-order on), a loopback receiver accepts each event into the inbox before
 * its 2xx, and the worker applies them. Its changes are then held against the sandbox's own
 * record of the day: the members it announced are in the snapshot without a full walk.
 */
import { createServer } from "node:http";
import type { AddressInfo } from "node:net";
import type { ServiceClient } from "../api/client.js";
import type { Sandbox } from "../sandbox/index.js";
import type { SnapshotStore } from "../store/snapshot.js";
import { drainInbox, type DrainReport } from "../webhooks/apply.js";
import { Inbox } from "../webhooks/inbox.js";

export interface WebhookDemoResult {
  readonly day: string;
  /** Events the sender sent (each twice), and the members they named. */
  readonly events: number;
  readonly members: number;
  readonly drain: DrainReport;
  readonly durationMs: number;
  /** The worker's recorded changes equal the day's member and coverage changes (deletes aside). */
  readonly matchesGroundTruth: boolean;
  /** The day's changes events do not announce (deleted members, claims, groups): the next full walk's. */
  readonly leftToTheWalk: number;
}

export async function webhookDay(sb: Sandbox, client: ServiceClient, store: SnapshotStore, inboxPath: string): Promise<WebhookDemoResult> {
  const inbox = Inbox.open(inboxPath);
  const receiver = await loopbackReceiver(inbox);
  try {
    const url = receiver.url;
    sb.webhooks.addConfig({ url, auth: { type: "bearer", token: "demo" }, duplicate: true, outOfOrder: true });
    const cs = await sb.advance();
    await sb.webhooks.idle();
    const started = Date.now();
    const drain = await drainInbox({ inbox, source: client, store });
    const durationMs = Date.now() - started;
    const c = cs.changes;
    const truth = [
      ...c.members.inserted.map((id) => `members insert ${id}`),
      ...c.members.updated.map((id) => `members update ${id}`),
      ...c.coverages.inserted.map((id) => `coverages insert ${id}`),
      ...c.coverages.updated.map((id) => `coverages update ${id}`),
    ].sort();
    const runIds = drain.runs.map((r) => r.runId);
    const recorded = runIds.length === 0 ? [] : (store.db.prepare(`SELECT resource || ' ' || op || ' ' || id FROM changes WHERE run_id IN (${runIds.map(() => "?").join(",")})`).pluck().all(...runIds) as string[]);
    const events = sb.webhooks.events();
    const leftToTheWalk = Object.entries(c).reduce((n, [r, x]) => n + x.deleted.length + (r === "members" || r === "coverages" ? 0 : x.inserted.length + x.updated.length), 0);
    return {
      day: cs.day,
      events: events.length,
      members: new Set(events.map((e) => e.payload.id)).size,
      drain,
      durationMs,
      matchesGroundTruth: drain.error === undefined && JSON.stringify(recorded.sort()) === JSON.stringify(truth),
      leftToTheWalk,
    };
  } finally {
    await receiver.close();
    inbox.close();
  }
}

/**
 * A receiver on loopback that accepts each event into `inbox` before its 2xx, with no check of
 * signature or auth: it stands in for `webhooks serve` where the sandbox is the only sender.
 */
export async function loopbackReceiver(inbox: Inbox): Promise<{ url: string; close(): Promise<void> }> {
  const server = createServer((req, res) => {
    let body = "";
    req.on("data", (c: Buffer) => (body += c.toString("utf8")));
    req.on("end", () => {
      const e = JSON.parse(body) as { id: string; type: string; payload: { id: string } };
      inbox.accept([{ id: e.id, type: e.type, memberId: e.payload.id, receivedAt: new Date().toISOString() }]);
      res.writeHead(204).end();
    });
  });
  await new Promise<void>((r) => server.listen(0, "127.0.0.1", r));
  return {
    url: `http://127.0.0.1:${(server.address() as AddressInfo).port}/webhooks`,
    close: () => new Promise<void>((r) => server.close(() => r())),
  };
}

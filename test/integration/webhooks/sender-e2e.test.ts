/**
 * End to end with the sandbox's own sender (duplicates and out-of-order on): its events reach an
 * inbox through a small receiver (accept, then 2xx, as the real one does), the worker applies
 * them, and every changed member of the snapshot equals the sandbox's state. In one round a full
 * sync runs at the same time as the worker. And the safety net: with the receiver down, the
 * events of a day are lost, and the next full walk brings the snapshot to the service's state.
 */
import { afterEach, describe, expect, it } from "vitest";
import { createClient } from "../../../src/api/client.js";
import { sync } from "../../../src/pipeline/sync.js";
import { openWorkerSnapshot } from "../../../src/store/worker-port.js";
import { startSandbox, type Sandbox } from "../../../src/sandbox/index.js";
import { drainInbox } from "../../../src/webhooks/apply.js";
import { loopbackReceiver } from "../../../src/pipeline/demo-webhooks.js";
import { Inbox, inboxPathFor } from "../../../src/webhooks/inbox.js";
import { expectedState, norm, snapshotState, stateToObject } from "../../helpers/expected.js";
import { ALL_CLAIMS, sandboxData } from "../../helpers/sandbox-truth.js";
import { syncStarted, TEST_PII_KEY, tempStore, type TempStore } from "../../helpers/temp-store.js";

let cleanups: (() => Promise<void> | void)[] = [];
afterEach(async () => {
  for (const c of cleanups.reverse()) await c();
  cleanups = [];
});

/** Accepts each event into the inbox before its 2xx, as `webhooks serve` does. */
async function tinyReceiver(inbox: Inbox): Promise<{ url: string; close(): Promise<void> }> {
  const r = await loopbackReceiver(inbox);
  cleanups.push(() => r.close().catch(() => undefined));
  return r;
}

async function setup() {
  const sb = await startSandbox({ members: 500, seed: 31, groups: 3, webhookDelayMs: 20 });
  const client = createClient({ baseUrl: sb.baseUrl, apiKey: sb.keys.full, retry: { maxAttempts: 4, baseMs: 2, capMs: 20, retryAfterCapMs: 100 } });
  const t = tempStore();
  const inbox = Inbox.open(inboxPathFor(t.path));
  cleanups.push(() => sb.close(), () => client.close(), () => t.cleanup(), () => inbox.close());
  return { sb, client, t, inbox };
}

const membersOf = (sb: Sandbox) => new Map([...sb.iterate("members")].map((m) => [m.id, JSON.stringify(norm(m))]));

/** The snapshot's members and coverages of `ids` equal the sandbox's. */
function expectMembersMatch(t: TempStore, sb: Sandbox, ids: readonly string[]): void {
  const got = snapshotState(t.db);
  const want = expectedState(sandboxData(sb), TEST_PII_KEY);
  const pick = (s: typeof got) => ({
    members: ids.map((id) => [id, s.members.get(id) ?? null]),
    coverages: [...s.coverages].filter(([, c]) => ids.includes((c as { memberId: string }).memberId)).sort(([a], [b]) => a.localeCompare(b)),
  });
  expect(pick(got)).toEqual(pick(want));
}

describe("the sandbox's sender, the inbox and the worker", () => {
  it("after each simulated day every changed member equals the sandbox's state; in the second round a full sync runs beside the worker", async () => {
    const { sb, client, t, inbox } = await setup();
    const receiver = await tinyReceiver(inbox);
    sb.webhooks.addConfig({ url: receiver.url, auth: { type: "bearer", token: "hook-token" }, duplicate: true, outOfOrder: true });
    await syncStarted({ source: client, store: t.store, claimsWindow: ALL_CLAIMS });

    // Round 1: the worker alone.
    let before = membersOf(sb);
    const day1 = await sb.advance();
    await sb.webhooks.idle();
    let after = membersOf(sb);
    let changed = [...after.keys()].filter((id) => after.get(id) !== before.get(id));
    expect(changed.length).toBeGreaterThan(3);
    // Each event was delivered twice: the inbox kept one row per event id.
    expect(sb.webhooks.deliveries().filter((d) => d.state === "successful").length).toBe(2 * sb.webhooks.events().length);
    const r1 = await drainInbox({ inbox, source: client, store: t.store });
    expect(r1).toMatchObject({ applied: sb.webhooks.events().length, retrying: 0, parked: 0, notFound: day1.changes.members.deleted.length });
    expectMembersMatch(t, sb, changed);

    // Round 2: a full sync on its own thread (as the CLI runs it) at the same time as the worker.
    before = after;
    await sb.advance();
    await sb.webhooks.idle();
    after = membersOf(sb);
    changed = [...after.keys()].filter((id) => after.get(id) !== before.get(id));
    const port = await openWorkerSnapshot(t.path, { piiKey: TEST_PII_KEY });
    cleanups.push(() => port.close());
    let walking!: () => void;
    const holds = new Promise<void>((r) => (walking = r));
    // The worker starts once the walk holds the snapshot (its first page is in).
    const walk = sync({ source: client, store: port, claimsWindow: ALL_CLAIMS, onProgress: () => walking() });
    let walked = false;
    void walk.then(() => (walked = true));
    await holds;
    let busyRounds = 0;
    while (inbox.status().pending > 0) {
      const r = await drainInbox({ inbox, source: client, store: t.store });
      if (r.busy) {
        busyRounds++;
        // The sync holds the snapshot: the events wait (pending), and are applied once it ends.
        expect(inbox.status().pending).toBeGreaterThan(0);
        await walk;
      }
      expect(r.error).toBeUndefined();
    }
    expect((await walk).status).toBe("succeeded");
    expect(walked).toBe(true);
    expectMembersMatch(t, sb, changed);
    // Both writers together leave the snapshot equal to the service (the walk made the deletes).
    expect(stateToObject(snapshotState(t.db))).toEqual(stateToObject(expectedState(sandboxData(sb), TEST_PII_KEY)));
    expect(busyRounds).toBe(1);
  }, 600_000); // a hang guard: two days of a 500-member sandbox, a full sync beside; ~20 s alone

  it("the safety net: with the receiver down a day's events are lost, and the next full walk brings the snapshot to the service's state", async () => {
    const { sb, client, t, inbox } = await setup();
    const receiver = await tinyReceiver(inbox);
    await receiver.close();
    sb.webhooks.addConfig({ url: receiver.url, auth: { type: "bearer", token: "hook-token" }, maxAttempts: 3 });
    await syncStarted({ source: client, store: t.store, claimsWindow: ALL_CLAIMS });
    const day = await sb.advance();
    await sb.webhooks.idle();
    const deliveries = sb.webhooks.deliveries();
    expect(deliveries.length).toBeGreaterThan(3);
    expect(deliveries.every((d) => d.state === "failed" && d.final && d.attempts.length === 3)).toBe(true);
    expect(inbox.status().pending).toBe(0);
    expect((await drainInbox({ inbox, source: client, store: t.store })).runs).toEqual([]);
    expect(stateToObject(snapshotState(t.db))).not.toEqual(stateToObject(expectedState(sandboxData(sb), TEST_PII_KEY)));
    const walk = await syncStarted({ source: client, store: t.store, claimsWindow: ALL_CLAIMS });
    expect(walk.status).toBe("succeeded");
    expect(walk.resources.members!.inserted + walk.resources.members!.updated + walk.resources.members!.deleted).toBe(
      day.changes.members.inserted.length + day.changes.members.updated.length + day.changes.members.deleted.length,
    );
    expect(stateToObject(snapshotState(t.db))).toEqual(stateToObject(expectedState(sandboxData(sb), TEST_PII_KEY)));
  });
});

/**
 * End to end with the sandbox's own sender (duplicates and out-of-order on): its events reach an
 * inbox through a small receiver (accept, then 2xx, as the real one does), the worker applies
 * them, and every changed member of the snapshot equals the sandbox's state. In one round the day's
 * changes land while a full sync walks, after it has read the members: the events arrive during the
 * walk, wait while it holds the snapshot, and the worker's runs after it record exactly the day's
 * changes of members and coverages. And the safety net: with the receiver down, the
 * events of a day are lost, and the next full walk brings the snapshot to the service's state.
 */
import { afterEach, describe, expect, it } from "vitest";
import { createClient } from "../../../src/api/client.js";
import { sync } from "../../../src/pipeline/sync.js";
import { openWorkerSnapshot } from "../../../src/store/worker-port.js";
import { startSandbox, type ChangeSet, type Sandbox } from "../../../src/sandbox/index.js";
import { drainInbox } from "../../../src/webhooks/apply.js";
import type { PageSource } from "../../../src/extract/page-source.js";
import { loopbackReceiver } from "../../../src/pipeline/demo-webhooks.js";
import { Inbox, inboxPathFor } from "../../../src/webhooks/inbox.js";
import { diffStates, expectedState, norm, recordedChanges, snapshotState, stateToObject } from "../../helpers/expected.js";
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
  it("after each simulated day every changed member equals the sandbox's state; in the second round the day lands mid-walk and the worker applies what the walk had read before it", async () => {
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

    // Round 2: a full sync on its own thread (as the CLI runs it), and the day's changes land while it
    // walks, after it has read every page of members: only the receiver can bring those up to date.
    before = after;
    const stateBefore = expectedState(sandboxData(sb), TEST_PII_KEY);
    const port = await openWorkerSnapshot(t.path, { piiKey: TEST_PII_KEY });
    cleanups.push(() => port.close());
    const groups = [...sb.iterate("groups")].length;
    let day!: Promise<ChangeSet>;
    let dayBegan!: () => void;
    const dayBegins = new Promise<void>((r) => (dayBegan = r));
    let resume!: () => void;
    const workerTried = new Promise<void>((r) => (resume = r));
    // The walk reads the service as it always does. When it has read the last page of members of every
    // group, the day happens, and the walk's members cannot be done (nor the walk end) until the day's
    // events are delivered and the worker has tried the snapshot: both happen mid-walk.
    let membersRead = 0;
    const source: PageSource = {
      pages: (...a) => client.pages(...a),
      memberText: (...a) => client.memberText(...a),
      async *rawPages(resource, filters, opts) {
        yield* client.rawPages(resource, filters, opts);
        if (resource !== "members" || filters?.groupId === undefined) return;
        if (++membersRead === groups) {
          day = sb.advance();
          dayBegan();
        }
        await dayBegins;
        await day;
        await sb.webhooks.idle();
        await workerTried;
      },
    };
    const walk = sync({ source, store: port, claimsWindow: ALL_CLAIMS });
    let walked = false;
    void walk.then(() => (walked = true));
    await Promise.race([dayBegins, walk.then(() => Promise.reject(new Error("the walk ended before it had read every group's members")))]);
    const day2 = await day;
    await sb.webhooks.idle();
    after = membersOf(sb);
    changed = [...after.keys()].filter((id) => after.get(id) !== before.get(id));
    expect(changed.length).toBeGreaterThan(3);
    // The day's events are in the inbox while the walk holds the snapshot: the worker waits, nothing is lost.
    const pendingMidWalk = inbox.status().pending;
    expect(pendingMidWalk).toBeGreaterThan(0);
    const busy = await drainInbox({ inbox, source: client, store: t.store });
    expect(walked).toBe(false);
    expect(busy.busy).toBeDefined();
    expect(busy.runs).toEqual([]);
    expect(inbox.status().pending).toBe(pendingMidWalk);
    resume();
    const walkReport = await walk;
    expect(walkReport.status).toBe("succeeded");
    // After the walk, the worker drains until nothing is pending.
    while (inbox.status().pending > 0) {
      const r = await drainInbox({ inbox, source: client, store: t.store });
      expect(r).toMatchObject({ retrying: 0, parked: 0 });
      expect(r.error).toBeUndefined();
      expect(r.busy).toBeUndefined();
    }
    expect(inbox.status().parked).toEqual([]);
    // The receiver did its part: the worker's runs after the walk recorded the day's changes of the
    // members and coverages, exactly (a member deleted today answers 404: kept until a walk proves it gone).
    const workerRuns = t.db.prepare("SELECT run_id FROM runs WHERE job = 'webhooks' AND status = 'succeeded' AND run_id > ?").pluck().all(walkReport.runId) as number[];
    const gone = new Set(day2.changes.members.deleted);
    const stateAfter = expectedState(sandboxData(sb), TEST_PII_KEY);
    const ofGone = (line: string) => {
      const [resource, op, id] = line.split(" ") as [string, string, string];
      if (op !== "delete") return false;
      return resource === "members" ? gone.has(id) : gone.has((stateBefore.coverages.get(id) as { memberId: string }).memberId);
    };
    const dayChanges = diffStates(stateBefore, stateAfter).filter((c) => /^(members|coverages) /.test(c) && !ofGone(c));
    expect(dayChanges.filter((c) => c.startsWith("members ")).length).toBeGreaterThan(0);
    expect(recordedChanges(t.db, workerRuns).filter((c) => /^(members|coverages) /.test(c))).toEqual(dayChanges);
    // Walk and worker together: every member the sandbox has, with its coverages, equals the sandbox's.
    expectMembersMatch(t, sb, [...after.keys()]);
  }); // two days of a 500-member sandbox, a full sync beside; ~20 s alone

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

import { afterEach, describe, expect, it } from "vitest";
import { createClient } from "../../../src/api/client.js";
import { openDatabase } from "../../../src/store/file/database.js";
import { SnapshotStore } from "../../../src/store/snapshot.js";
import { startSandbox, type Sandbox } from "../../../src/sandbox/index.js";
import { Inbox, inboxPathFor } from "../../../src/webhooks/inbox.js";
import { drainInbox, WEBHOOK_JOB } from "../../../src/webhooks/apply.js";
import { expectedState, norm, recordedChanges, snapshotState } from "../../helpers/expected.js";
import { ALL_CLAIMS, sandboxData } from "../../helpers/sandbox-truth.js";
import { syncStarted, TEST_PII_KEY, tempStore } from "../../helpers/temp-store.js";

let cleanups: (() => Promise<void> | void)[] = [];
afterEach(async () => {
  for (const c of cleanups.reverse()) await c();
  cleanups = [];
});

async function setup(opts: { retry?: number } = {}) {
  const sb = await startSandbox({ members: 400, seed: 23, groups: 3 });
  const client = createClient({
    baseUrl: sb.baseUrl,
    apiKey: sb.keys.full,
    retry: { maxAttempts: opts.retry ?? 4, baseMs: 2, capMs: 20, retryAfterCapMs: 100 },
    deadlines: { connectMs: 2000, headersMs: 2000, bodyMs: 2000 },
  });
  const t = tempStore();
  const inbox = Inbox.open(inboxPathFor(t.path));
  cleanups.push(() => sb.close(), () => client.close(), () => t.cleanup(), () => inbox.close());
  return { sb, client, t, inbox };
}

/** Members whose record (coverages included) differs between two reads of the sandbox. */
function changedMembers(before: Sandbox | Map<string, string>, after: Sandbox): string[] {
  const b = before instanceof Map ? before : membersOf(before);
  const a = membersOf(after);
  return [...new Set([...a.keys(), ...b.keys()])].filter((id) => a.get(id) !== b.get(id)).sort();
}
function membersOf(sb: Sandbox): Map<string, string> {
  return new Map([...sb.iterate("members")].map((m) => [m.id, JSON.stringify(norm(m))]));
}

let seq = 0;
const events = (ids: readonly string[], at = new Date().toISOString()) => ids.map((memberId) => ({ id: `evt_${++seq}`, type: "member_update", memberId, receivedAt: at }));

/** The snapshot's members and coverages for these ids, and what the sandbox says of them. */
function membersInSnapshot(db: Parameters<typeof snapshotState>[0], sb: Sandbox, ids: readonly string[]) {
  const got = snapshotState(db);
  const want = expectedState(sandboxData(sb), TEST_PII_KEY);
  const pick = (s: typeof got) => ({
    members: ids.map((id) => s.members.get(id) ?? null),
    coverages: [...s.coverages].filter(([, c]) => ids.includes((c as { memberId: string }).memberId)).sort(([x], [y]) => x.localeCompare(y)),
  });
  return { got: pick(got), want: pick(want) };
}

describe("the webhook worker drains the inbox into the snapshot", () => {
  it("refetches each changed member once and applies it as a recorded webhooks run; a 404 deletes nothing; the next full walk decides", async () => {
    const { sb, client, t, inbox } = await setup();
    await syncStarted({ source: client, store: t.store, claimsWindow: ALL_CLAIMS });
    const before = membersOf(sb);
    const cs = await sb.advance();
    const changed = changedMembers(before, sb);
    const deleted = cs.changes.members.deleted;
    expect(deleted.length).toBeGreaterThan(0);
    expect(changed.length).toBeGreaterThan(deleted.length);
    // Every event twice (a redelivery under a new id too), in reverse order.
    inbox.accept(events([...changed].reverse()));
    inbox.accept(events(changed));
    const report = await drainInbox({ inbox, source: client, store: t.store });
    expect(report).toMatchObject({ applied: changed.length * 2, notFound: deleted.length, retrying: 0, parked: 0 });
    expect(report.runs).toHaveLength(1);
    const runId = report.runs[0]!.runId;
    expect(t.db.prepare("SELECT job, status FROM runs WHERE run_id = ?").get(runId)).toEqual({ job: WEBHOOK_JOB, status: "succeeded" });
    const alive = changed.filter((id) => !deleted.includes(id));
    const { got, want } = membersInSnapshot(t.db, sb, alive);
    expect(got).toEqual(want);
    // The run's changes are the day's member and coverage changes, deletes aside.
    const gone = new Set(deleted);
    const coverageOwner = new Map([...snapshotState(t.db).coverages].map(([id, c]) => [id, (c as { memberId: string }).memberId]));
    const dayLines = [
      ...cs.changes.members.inserted.map((id) => `members insert ${id}`),
      ...cs.changes.members.updated.map((id) => `members update ${id}`),
      ...cs.changes.coverages.inserted.map((id) => `coverages insert ${id}`),
      ...cs.changes.coverages.updated.filter((id) => !gone.has(coverageOwner.get(id) ?? "")).map((id) => `coverages update ${id}`),
    ].sort();
    expect(recordedChanges(t.db, runId)).toEqual(dayLines);
    // A 404 alone is not a deletion: the member stays until a full walk proves it gone.
    for (const id of deleted) expect(t.db.prepare("SELECT COUNT(*) FROM members WHERE id = ?").pluck().get(id)).toBe(1);
    expect(inbox.status()).toMatchObject({ pending: 0, applied: changed.length * 2, lastAppliedRun: runId, parked: [] });
    const full = await syncStarted({ source: client, store: t.store, claimsWindow: ALL_CLAIMS });
    expect(recordedChanges(t.db, full.runId).filter((l) => l.startsWith("members "))).toEqual(deleted.map((id) => `members delete ${id}`).sort());
    expect(snapshotState(t.db).members.size).toBe(expectedState(sandboxData(sb), TEST_PII_KEY).members.size);
  });

  it("waits while a sync holds the snapshot: nothing is applied, no attempt is counted, every event stays pending", async () => {
    const { sb, client, t, inbox } = await setup();
    await syncStarted({ source: client, store: t.store, claimsWindow: ALL_CLAIMS });
    const before = membersOf(sb);
    await sb.advance();
    const changed = changedMembers(before, sb);
    inbox.accept(events(changed));
    // Another process's sync, in the middle of its walk.
    const otherDb = openDatabase(t.path);
    const other = new SnapshotStore(otherDb, { piiKey: TEST_PII_KEY });
    cleanups.push(() => void otherDb.close());
    const held = other.startRun("sync", { resources: ["members"] });
    const busy = await drainInbox({ inbox, source: client, store: t.store });
    expect(busy.busy?.code).toBe("SNAPSHOT_BUSY");
    expect(busy.busy?.message).toContain(`run ${held.runId}`);
    expect(busy.runs).toEqual([]);
    expect(inbox.status().pending).toBe(changed.length);
    expect(inbox.due(new Date().toISOString(), 1000).every((m) => m.attempts === 0)).toBe(true);
    other.finishRun({ maxDeleteShare: 0.1, maxDeleteCount: 50, emptyScopeMin: 5, absenceRuns: 1, allowDeletes: false }, { message: "stopped by the test" });
    const after = await drainInbox({ inbox, source: client, store: t.store });
    expect(after.busy).toBeUndefined();
    expect(after.applied).toBe(changed.length);
    expect(inbox.status().pending).toBe(0);
  });

  it("refetches before it claims the snapshot: a run that begins meanwhile gets it, and what the worker fetched is dropped, its events pending", async () => {
    const { sb, client, t, inbox } = await setup();
    await syncStarted({ source: client, store: t.store, claimsWindow: ALL_CLAIMS });
    const before = membersOf(sb);
    const day = await sb.advance();
    const changed = changedMembers(before, sb);
    inbox.accept(events(changed));
    const otherDb = openDatabase(t.path);
    const other = new SnapshotStore(otherDb, { piiKey: TEST_PII_KEY });
    cleanups.push(() => void otherDb.close());
    // Another process's run begins and ends while the worker waits on its first lookup: before,
    // the worker held the lease through its lookups, and that run was refused (busy).
    let began: number | undefined;
    const source = {
      memberText: async (id: string, opts?: { signal?: AbortSignal }) => {
        if (began === undefined) {
          began = other.startRun("sync", { resources: ["members"] }).runId;
          other.finishRun({ maxDeleteShare: 0.1, maxDeleteCount: 50, emptyScopeMin: 5, absenceRuns: 1, allowDeletes: false }, { message: "a run that began while the worker fetched" });
        }
        return client.memberText(id, opts);
      },
    };
    const report = await drainInbox({ inbox, source, store: t.store, settings: { batchSize: 1000 } });
    expect(began).toBeDefined();
    expect(report.busy?.message).toContain(`run ${began} began while the worker refetched these members`);
    expect(report).toMatchObject({ applied: 0, retrying: 0, parked: 0, runs: [{ runId: began! + 1, status: "succeeded", members: 0 }] });
    expect(recordedChanges(t.db, [began! + 1])).toEqual([]);
    expect(inbox.status().pending).toBe(changed.length);
    expect(inbox.due(new Date().toISOString(), 1000).every((m) => m.attempts === 0)).toBe(true);
    // The next drain, with no run beginning meanwhile, applies them.
    const after = await drainInbox({ inbox, source: client, store: t.store, settings: { batchSize: 1000 } });
    expect(after.busy).toBeUndefined();
    expect(after.applied).toBe(changed.length);
    // A 404 deletes nothing (the next full walk decides): the members still listed equal the sandbox's.
    const { got, want } = membersInSnapshot(t.db, sb, changed.filter((id) => !day.changes.members.deleted.includes(id)));
    expect(got).toEqual(want);
  });

  it("an API fault is retried with backoff, then parked with its reason, with no key or SSN in it", async () => {
    const { sb, client, t, inbox } = await setup({ retry: 1 });
    await syncStarted({ source: client, store: t.store, claimsWindow: ALL_CLAIMS });
    const id = [...sb.iterate("members")][5]!.id;
    inbox.accept(events([id], "2026-03-01T10:00:00.000Z"));
    sb.setFaults({ pathPrefix: "/v1/members", http503: 1 });
    let clock = new Date("2026-03-01T10:00:01.000Z");
    const settings = { maxAttempts: 2, retryBaseMs: 60_000, retryCapMs: 600_000 };
    const first = await drainInbox({ inbox, source: client, store: t.store, settings, now: () => clock, random: () => 0.5 });
    expect(first).toMatchObject({ applied: 0, retrying: 1, parked: 0 });
    // Not due again before its backoff: at least retryBaseMs later.
    clock = new Date(clock.getTime() + 59_000);
    expect((await drainInbox({ inbox, source: client, store: t.store, settings, now: () => clock })).runs).toEqual([]);
    clock = new Date(clock.getTime() + 600_000);
    const second = await drainInbox({ inbox, source: client, store: t.store, settings, now: () => clock });
    expect(second).toMatchObject({ applied: 0, retrying: 0, parked: 1 });
    const parked = inbox.status().parked;
    expect(parked).toHaveLength(1);
    expect(parked[0]!.memberId).toBe(id);
    expect(parked[0]!.reason).toMatch(/^SERVER_ERROR: .*503/);
    expect(parked[0]!.reason).not.toContain(sb.keys.full);
    expect(parked[0]!.reason).not.toMatch(/\b\d{3}-?\d{2}-?\d{4}\b/);
    sb.setFaults({});
    // A parked event is not retried by itself, and is forgotten after the retention (30 days by default).
    expect((await drainInbox({ inbox, source: client, store: t.store, settings, now: () => clock })).runs).toEqual([]);
    clock = new Date(clock.getTime() + 29 * 86_400_000);
    expect((await drainInbox({ inbox, source: client, store: t.store, settings, now: () => clock })).pruned).toBe(0);
    clock = new Date(clock.getTime() + 2 * 86_400_000);
    expect((await drainInbox({ inbox, source: client, store: t.store, settings, now: () => clock })).pruned).toBe(1);
    expect(inbox.status().parked).toEqual([]);
  });

  it("a webhook run keeps the last walk's cached pages: the next sync with no change reads no member page again", async () => {
    const { sb, client, t, inbox } = await setup();
    await syncStarted({ source: client, store: t.store, claimsWindow: ALL_CLAIMS });
    const pages = () => t.db.prepare("SELECT COUNT(*) FROM _pages WHERE scope LIKE 'members?%'").pluck().get() as number;
    const cached = pages();
    expect(cached).toBeGreaterThan(2);
    const unchanged = [...sb.iterate("members")].slice(0, 3).map((m) => m.id);
    inbox.accept(events(unchanged));
    expect((await drainInbox({ inbox, source: client, store: t.store })).applied).toBe(3);
    expect(pages()).toBe(cached);
    const again = await syncStarted({ source: client, store: t.store, claimsWindow: ALL_CLAIMS });
    expect(recordedChanges(t.db, again.runId)).toEqual([]);
    expect(pages()).toBe(cached);
  });

  it("a refetched member invalidates the cached pages that list it: a page seen again byte for byte never re-asserts the older version", async () => {
    const { sb, client, t, inbox } = await setup();
    await syncStarted({ source: client, store: t.store, claimsWindow: ALL_CLAIMS });
    // A member on a page the walk cached (one listing a member of two groups is not cached).
    const cachedIds = JSON.parse(t.db.prepare("SELECT ids FROM _pages WHERE scope LIKE 'members?%' ORDER BY scope, cursor LIMIT 1").pluck().get() as string) as string[];
    const m = [...sb.iterate("members")].find((x) => x.id === cachedIds[3])!;
    // A -> B, told by an event the worker applies; then B -> A with the event lost. The member's
    // listing page is then exactly the bytes the snapshot cached in the first walk.
    await client.patchMember(m.id, { firstName: "Webhookia" });
    inbox.accept(events([m.id]));
    await drainInbox({ inbox, source: client, store: t.store });
    expect((snapshotState(t.db).members.get(m.id) as { firstName: string }).firstName).toBe("Webhookia");
    await client.patchMember(m.id, { firstName: m.firstName });
    const walk = await syncStarted({ source: client, store: t.store, claimsWindow: ALL_CLAIMS });
    expect(recordedChanges(t.db, walk.runId)).toEqual([`members update ${m.id}`]);
    expect((snapshotState(t.db).members.get(m.id) as { firstName: string }).firstName).toBe(m.firstName);
  });
});

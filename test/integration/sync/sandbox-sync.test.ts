import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { createClient, type ServiceClient } from "../../../src/api/client.js";
import { sync } from "../../../src/pipeline/sync.js";
import type { SnapshotStore } from "../../../src/store/snapshot.js";
import type { SnapshotPort } from "../../../src/store/snapshot-port.js";
import { openWorkerSnapshot } from "../../../src/store/worker-port.js";
import { startSandbox, type Sandbox } from "../../../src/sandbox/index.js";
import { expectedState, recordedChanges, snapshotState, stateToObject } from "../../helpers/expected.js";
import { ALL_CLAIMS, changeSetLines, sandboxData } from "../../helpers/sandbox-truth.js";
import { syncStarted, TEST_PII_KEY, tempStore, type TempStore } from "../../helpers/temp-store.js";

let cleanups: (() => Promise<void> | void)[] = [];
afterEach(async () => {
  for (const c of cleanups.reverse()) await c();
  cleanups = [];
});

type Where = "this thread" | "a worker thread";
let where: Where = "this thread";

async function setup(opts: { members?: number; seed?: number; retry?: number } = {}) {
  const sb = await startSandbox({ members: opts.members ?? 600, seed: opts.seed ?? 11, groups: 3 });
  const client = createClient({
    baseUrl: sb.baseUrl,
    apiKey: sb.keys.full,
    retry: { maxAttempts: opts.retry ?? 6, baseMs: 5, capMs: 50, retryAfterCapMs: 1000 },
    deadlines: { connectMs: 2000, headersMs: 2000, bodyMs: 2000 },
  });
  const t = tempStore();
  cleanups.push(() => sb.close(), () => client.close(), () => t.cleanup());
  // The CLI runs the snapshot on its own thread: every test runs both ways.
  const worker = where === "a worker thread" ? await openWorkerSnapshot(t.path, { piiKey: TEST_PII_KEY }) : undefined;
  if (worker) cleanups.push(() => worker.close());
  return { sb, client, t: { ...t, store: worker ?? t.store } };
}

type Target = { db: TempStore["db"]; store: SnapshotStore | SnapshotPort };
const run = (client: ServiceClient, t: Target, extra: Partial<Parameters<typeof sync>[0]> = {}) =>
  syncStarted({ source: client, store: t.store, claimsWindow: ALL_CLAIMS, ...extra });

function expectSnapshotEqualsSandbox(sb: Sandbox, t: Target): void {
  expect(stateToObject(snapshotState(t.db))).toEqual(stateToObject(expectedState(sandboxData(sb), TEST_PII_KEY)));
}

describe.each(["this thread", "a worker thread"] as const)("sync against the sandbox over loopback, the snapshot on %s", (w) => {
  beforeEach(() => {
    where = w;
  });

  it("the first run equals the sandbox's data; after advance() the second run's changes equal the change set exactly", async () => {
    const { sb, client, t } = await setup();
    const first = await run(client, t);
    expect(first.status).toBe("succeeded");
    expectSnapshotEqualsSandbox(sb, t);
    const cs = await sb.advance();
    const expected = changeSetLines(cs);
    expect(expected.length).toBeGreaterThan(10);
    const second = await run(client, t);
    expect(second.status).toBe("succeeded");
    expect(recordedChanges(t.db, second.runId)).toEqual(expected);
    expectSnapshotEqualsSandbox(sb, t);
    // A further day, to check that history accumulates and deleted ids stay deleted.
    const cs2 = await sb.advance();
    const third = await run(client, t);
    expect(recordedChanges(t.db, third.runId)).toEqual(changeSetLines(cs2));
  });

  it("a week between runs: the claims voided that week are deleted, not refused because a group with no claims listed none", async () => {
    // The sandbox voids one claim a day; a prior-year group has no claims at all. The delete guard
    // once counted every deleted claim against every empty group's scope ("a scope emptied").
    const { sb, client, t } = await setup();
    expect((await run(client, t)).status).toBe("succeeded");
    let voided = 0;
    for (let d = 0; d < 7; d++) voided += (await sb.advance()).changes.claims.deleted.length;
    expect(voided).toBeGreaterThanOrEqual(5);
    const second = await run(client, t);
    expect(second.error?.message).toBeUndefined();
    expect(second.status).toBe("succeeded");
    expect(second.resources.claims?.deleted).toBe(voided);
    expectSnapshotEqualsSandbox(sb, t);
  });

  it("with 429s, 500s, resets and slow pages the result is the same", async () => {
    const { sb, client, t } = await setup();
    await run(client, t);
    const cs = await sb.advance();
    sb.setFaults({ seed: 3, http429: 0.05, retryAfterSeconds: 0, http500: 0.05, reset: 0.05, latencyMs: { min: 0, max: 15 } });
    const second = await run(client, t);
    sb.setFaults({});
    expect(second.error).toBeUndefined();
    expect(second.status).toBe("succeeded");
    expect(client.stats.retries).toBeGreaterThan(3);
    expect(recordedChanges(t.db, second.runId)).toEqual(changeSetLines(cs));
    expectSnapshotEqualsSandbox(sb, t);
  });

  it("a persistent outage mid-walk fails the run, records it failed, deletes nothing; the next run converges", async () => {
    const { sb, client, t } = await setup({ retry: 2 });
    await run(client, t);
    const cs = await sb.advance();
    expect(cs.changes.members.deleted.length + cs.changes.claims.deleted.length).toBeGreaterThan(0);
    sb.setFaults({ afterRequests: 8, http503: 1 });
    const failed = await run(client, t);
    sb.setFaults({});
    expect(failed.status).toBe("failed");
    expect(failed.error?.code).toBe("SERVER_ERROR");
    expect(t.db.prepare("SELECT status FROM runs WHERE run_id = ?").pluck().get(failed.runId)).toBe("failed");
    expect(t.db.prepare("SELECT COUNT(*) FROM changes WHERE run_id = ? AND op = 'delete'").pluck().get(failed.runId)).toBe(0);
    const next = await run(client, t);
    expect(next.status).toBe("succeeded");
    expectSnapshotEqualsSandbox(sb, t);
    const both = recordedChanges(t.db, [failed.runId, next.runId]);
    expect(both).toEqual(changeSetLines(cs));
  });

  it("a stuck cursor fails the run with a clear error (bounded: it does not walk forever)", async () => {
    const { sb, client, t } = await setup();
    sb.setFaults({ stuckCursorOn: "members" });
    const r = await run(client, t);
    expect(r.status).toBe("failed");
    expect(r.error?.code).toBe("PAGINATION");
    expect(r.error?.message).toMatch(/cursor|repeats/);
    expect(t.db.prepare("SELECT COUNT(*) FROM changes WHERE op = 'delete'").pluck().get()).toBe(0);
  });

  it("an undocumented page size changes nothing", async () => {
    const { sb, client, t } = await setup();
    await run(client, t);
    sb.setFaults({ pageSizeOverride: 37 });
    const again = await run(client, t);
    expect(again.status).toBe("succeeded");
    expect(recordedChanges(t.db, again.runId)).toEqual([]);
    const cs = await sb.advance();
    const third = await run(client, t);
    expect(recordedChanges(t.db, third.runId)).toEqual(changeSetLines(cs));
  });

  it("items without an id are quarantined and their scopes delete nothing", async () => {
    const { sb, client, t } = await setup();
    await run(client, t);
    await sb.advance();
    sb.setFaults({ itemWithoutIdEvery: 40 });
    const r = await run(client, t);
    expect(r.status).toBe("succeeded");
    const quarantined = Object.values(r.resources).reduce((n, c) => n + (c?.quarantined ?? 0), 0);
    expect(quarantined).toBeGreaterThan(0);
    expect(t.db.prepare("SELECT COUNT(*) FROM changes WHERE run_id = ? AND op = 'delete' AND resource IN ('designs','groups','members','claims')").pluck().get(r.runId)).toBe(0);
    sb.setFaults({});
    const next = await run(client, t);
    expect(next.status).toBe("succeeded");
    expectSnapshotEqualsSandbox(sb, t);
  });

  it("a claims window never deletes claims outside it", async () => {
    const { sb, client, t } = await setup();
    await run(client, t);
    const dateOf = new Map(sandboxData(sb).claims.map((c) => [String(c.id), String(c.serviceDateFrom)]));
    const dates = [...dateOf.values()].sort();
    const window = { from: dates[0]!, to: dates[Math.floor(dates.length / 2)]! };
    const inWindow = (id: string) => dateOf.get(id)! >= window.from && dateOf.get(id)! <= window.to;
    // Simulated days until hard deletions have hit claims both inside and outside the window.
    const deleted: string[] = [];
    for (let i = 0; i < 30 && !(deleted.some(inWindow) && deleted.some((id) => !inWindow(id))); i++) {
      deleted.push(...(await sb.advance()).changes.claims.deleted.filter((id) => dateOf.has(id)));
    }
    expect(deleted.some(inWindow) && deleted.some((id) => !inWindow(id))).toBe(true);
    const r = await syncStarted({ source: client, store: t.store, claimsWindow: window, resources: ["claims"], deletePolicy: { allowDeletes: true } });
    expect(r.status).toBe("succeeded");
    const recorded = t.db.prepare("SELECT id FROM changes WHERE run_id = ? AND op = 'delete'").pluck().all(r.runId) as string[];
    expect(recorded.sort()).toEqual(deleted.filter(inWindow).sort());
    const stillThere = t.db.prepare("SELECT COUNT(*) FROM claims WHERE id = ?").pluck();
    for (const id of deleted.filter((x) => !inWindow(x))) expect(stillThere.get(id)).toBe(1);
  });

  it("an unchanged re-run records nothing and every record's hash is stable", async () => {
    const { client, t } = await setup();
    await run(client, t);
    const hashes = () =>
      ["designs", "groups", "plans", "members", "coverages", "claims"].flatMap((r) => t.db.prepare(`SELECT '${r}', id, hash FROM ${r} ORDER BY id`).raw().all());
    const before = hashes();
    const again = await run(client, t);
    expect(recordedChanges(t.db, again.runId)).toEqual([]);
    expect(hashes()).toEqual(before);
    expect(before.length).toBeGreaterThan(1000);
    expect(again.resources.members?.unchanged).toBeGreaterThan(0);
    expect(again.resources.coverages?.unchanged).toBe(again.resources.coverages?.seen);
    if (where === "a worker thread") {
      // The pages came back byte for byte: the walk recognised them without reading their items.
      // A page keeps the run that read it, and only the pages this walk read or recognised are
      // kept when it succeeds: the first run's pages still there were recognised by this one.
      const recognised = t.db.prepare("SELECT COUNT(*) FROM _pages WHERE run_id < ?").pluck().get(again.runId) as number;
      expect(recognised).toBeGreaterThan(10);
    }
  });
});

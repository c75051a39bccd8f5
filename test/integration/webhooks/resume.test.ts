/**
 * The worker's runs come between two syncs all day long (`webhooks serve` drains every second), so
 * they must not cost a failed walk its resume: the next sync resumes the failed walk, as the README
 * says, whatever webhook runs came in between (found by the simulation, seed 1010).
 */
import BetterSqlite3 from "better-sqlite3";
import { afterEach, describe, expect, it } from "vitest";
import { SnapshotStore } from "../../../src/store/snapshot.js";
import { drainInbox } from "../../../src/webhooks/apply.js";
import { Inbox, inboxPathFor } from "../../../src/webhooks/inbox.js";
import { expectedState, recordedChanges, snapshotState, stateToObject } from "../../helpers/expected.js";
import { rawMemorySource, type MemoryData } from "../../helpers/memory-source.js";
import { syncStarted, TEST_PII_KEY, tempStore } from "../../helpers/temp-store.js";

let cleanup: (() => void)[] = [];
afterEach(() => {
  for (const c of cleanup.reverse()) c();
  cleanup = [];
});

const window = { from: "2026-01-01", to: "2026-03-31" };
const member = (id: string, lastName = "Lee") => ({ id, firstName: "Ana", lastName, coverages: [{ id: `c-${id}`, groupId: "G1", status: "active" }] });

describe("a failed walk, then the webhook worker's runs, then the next sync", () => {
  it("the next sync resumes the failed walk (the worker's runs walk nothing) and the snapshot equals the service", async () => {
    const t = tempStore();
    cleanup.push(t.cleanup);
    const d: MemoryData = {
      designs: [{ id: "d1", name: "Gold" }],
      groups: [{ id: "gp1", groupId: "G1", plans: [] }],
      members: ["a", "b", "c", "d", "e", "f"].map((id) => member(id)),
      claims: [],
    };
    const store = new SnapshotStore(t.db, { piiKey: TEST_PII_KEY, commitEveryPages: 1 });
    const opts = { claimsWindow: window, resources: ["groups", "members"] as const, groupConcurrency: 1 };
    expect((await syncStarted({ source: rawMemorySource(() => d), store, ...opts, resources: [...opts.resources] })).status).toBe("succeeded");

    // The walk fails at its second page of members: another process holds the write lock.
    t.db.pragma("busy_timeout = 0");
    const other = new BetterSqlite3(t.path);
    cleanup.push(() => other.close());
    let fetches = 0;
    const failing = rawMemorySource(() => d, {
      onFetch: (_n, resource) => {
        if (resource !== "members") return;
        if (++fetches === 2) other.exec("BEGIN IMMEDIATE; INSERT INTO _absence (resource, id, count) VALUES ('analyst', 'x', 1);");
      },
    });
    const failed = await syncStarted({ source: failing, store, ...opts, resources: [...opts.resources] });
    expect(failed.status).toBe("failed");
    other.exec("ROLLBACK");

    // A member changes; its event is applied by the worker, a run of its own.
    d.members[0] = member("a", "Okafor");
    const inbox = Inbox.open(inboxPathFor(t.path));
    cleanup.push(() => inbox.close());
    inbox.accept([{ id: "evt_1", type: "member_update", memberId: "a", receivedAt: new Date().toISOString() }]);
    const source = rawMemorySource(() => d);
    const drained = await drainInbox({ inbox, source: { memberText: source.memberText! }, store });
    expect(drained.runs.map((r) => r.status)).toEqual(["succeeded"]);

    const next = await syncStarted({ source: rawMemorySource(() => d), store, ...opts, resources: [...opts.resources] });
    expect(next.status).toBe("succeeded");
    expect(next.resumedFrom).toBe(failed.runId);
    // The worker's run left the failed walk's seen ids alone: the resumed walk proves no delete it should not.
    expect(recordedChanges(t.db, next.runId).filter((c) => c.includes(" delete "))).toEqual([]);
    expect(stateToObject(snapshotState(t.db)).members).toEqual(stateToObject(expectedState(d, TEST_PII_KEY)).members);
  });
});

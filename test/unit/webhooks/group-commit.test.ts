/**
 * Group commit's rules, with a fake clock: events submitted together share one accept call (one
 * transaction, one fsync); none is answered before that commit; a failed commit fails every event
 * of its group and none of the next; a full group commits without waiting for the window.
 */
import { afterEach, beforeEach, describe, expect, it, vi } from "vitest";
import { GroupCommit, type AcceptingInbox } from "../../../src/webhooks/group-commit.js";
import type { InboxEvent } from "../../../src/webhooks/inbox.js";

const ev = (id: string): InboxEvent => ({ id, type: "member_update", memberId: `m_${id}`, receivedAt: "2026-11-24T10:00:00Z" });

/** An inbox that records each group it is given and knows the ids it has seen. */
function recordingInbox(failOn: number[] = []): AcceptingInbox & { groups: string[][] } {
  const seen = new Set<string>();
  const groups: string[][] = [];
  return {
    groups,
    accept(events) {
      groups.push(events.map((e) => e.id));
      if (failOn.includes(groups.length)) throw Object.assign(new Error("database or disk is full"), { code: "SQLITE_FULL" });
      return events.map((e) => (seen.has(e.id) ? false : (seen.add(e.id), true)));
    },
  };
}

beforeEach(() => vi.useFakeTimers());
afterEach(() => vi.useRealTimers());

describe("group commit", () => {
  it("events within the window share one commit, and none is answered before it", async () => {
    const inbox = recordingInbox();
    const gc = new GroupCommit(inbox, { windowMs: 5 });
    const answered: string[] = [];
    const a = gc.submit(ev("a")).then((n) => answered.push(`a:${n}`));
    await vi.advanceTimersByTimeAsync(3);
    const b = gc.submit(ev("b")).then((n) => answered.push(`b:${n}`));
    const a2 = gc.submit(ev("a")).then((n) => answered.push(`a2:${n}`));
    await vi.advanceTimersByTimeAsync(1);
    expect(answered).toEqual([]);
    expect(inbox.groups).toEqual([]);
    await vi.advanceTimersByTimeAsync(1);
    await Promise.all([a, b, a2]);
    expect(inbox.groups).toEqual([["a", "b", "a"]]);
    expect(answered).toEqual(["a:true", "b:true", "a2:false"]);
    expect({ commits: gc.commits, committed: gc.committed }).toEqual({ commits: 1, committed: 3 });
  });

  it("a failed commit rejects every event of its group, and the next group commits", async () => {
    const inbox = recordingInbox([1]);
    const gc = new GroupCommit(inbox, { windowMs: 2 });
    const first = [gc.submit(ev("x")), gc.submit(ev("y"))].map((p) => p.then(() => "stored", (e: { code?: string }) => e.code));
    await vi.advanceTimersByTimeAsync(2);
    expect(await Promise.all(first)).toEqual(["SQLITE_FULL", "SQLITE_FULL"]);
    const retry = gc.submit(ev("x"));
    await vi.advanceTimersByTimeAsync(2);
    expect(await retry).toBe(true);
    expect(inbox.groups).toEqual([["x", "y"], ["x"]]);
    expect(gc.commits).toBe(1);
  });

  it("a full group commits at once, without waiting for the window", async () => {
    const inbox = recordingInbox();
    const gc = new GroupCommit(inbox, { windowMs: 1000, maxGroup: 3 });
    const all = ["1", "2", "3"].map((id) => gc.submit(ev(id)));
    expect(inbox.groups).toEqual([["1", "2", "3"]]);
    expect(await Promise.all(all)).toEqual([true, true, true]);
  });

  it("flush commits what waits now (the receiver stopping)", async () => {
    const inbox = recordingInbox();
    const gc = new GroupCommit(inbox, { windowMs: 1000 });
    const p = gc.submit(ev("late"));
    gc.flush();
    expect(await p).toBe(true);
    await vi.advanceTimersByTimeAsync(1000);
    expect(inbox.groups).toEqual([["late"]]);
  });
});

describe("group commit on a writer thread (an inbox whose accept is asynchronous)", () => {
  /** An inbox whose commits finish only when the test says, one by one, like the writer thread's. */
  function slowInbox() {
    const groups: string[][] = [];
    const pending: { finish: () => void; fail: (e: Error) => void }[] = [];
    const inbox: AcceptingInbox = {
      accept(events) {
        groups.push(events.map((e) => e.id));
        return new Promise<boolean[]>((resolve, reject) => pending.push({ finish: () => resolve(events.map(() => true)), fail: reject }));
      },
    };
    return { inbox, groups, pending };
  }

  it("one commit at a time: what arrives during a commit waits for it, then commits at once as the next group", async () => {
    const { inbox, groups, pending } = slowInbox();
    const gc = new GroupCommit(inbox, { windowMs: 2 });
    const answered: string[] = [];
    const submit = (id: string) => gc.submit(ev(id)).then(() => answered.push(id));
    const first = [submit("a"), submit("b")];
    await vi.advanceTimersByTimeAsync(2);
    expect(groups).toEqual([["a", "b"]]);
    const second = [submit("c"), submit("d")];
    await vi.advanceTimersByTimeAsync(50);
    // The window has long passed, but the first group is still committing: no second commit yet.
    expect(groups).toEqual([["a", "b"]]);
    expect(answered).toEqual([]);
    pending[0]!.finish();
    await Promise.all(first);
    await vi.advanceTimersByTimeAsync(0);
    expect(answered).toEqual(["a", "b"]);
    expect(groups).toEqual([["a", "b"], ["c", "d"]]);
    pending[1]!.finish();
    await Promise.all(second);
    expect(answered).toEqual(["a", "b", "c", "d"]);
    expect(gc.commits).toBe(2);
  });

  it("a failed asynchronous commit fails its own group only; the group waiting behind it commits", async () => {
    const { inbox, groups, pending } = slowInbox();
    const gc = new GroupCommit(inbox, { windowMs: 2 });
    const a = gc.submit(ev("a"));
    await vi.advanceTimersByTimeAsync(2);
    const b = gc.submit(ev("b"));
    await vi.advanceTimersByTimeAsync(10);
    pending[0]!.fail(Object.assign(new Error("disk I/O error"), { code: "SQLITE_IOERR" }));
    await expect(a).rejects.toMatchObject({ code: "SQLITE_IOERR" });
    await vi.advanceTimersByTimeAsync(0);
    expect(groups).toEqual([["a"], ["b"]]);
    pending[1]!.finish();
    await expect(b).resolves.toBe(true);
  });
});

import BetterSqlite3 from "better-sqlite3";
import { mkdtempSync, readFileSync, rmSync, statSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, describe, expect, it } from "vitest";
import { Inbox, inboxPathFor } from "../../../src/webhooks/inbox.js";

const made: string[] = [];
const dir = () => {
  const d = mkdtempSync(join(tmpdir(), "bs-inbox-"));
  made.push(d);
  return d;
};
afterAll(() => {
  for (const d of made) rmSync(d, { recursive: true, force: true });
});
const ev = (id: string, memberId: string | null, receivedAt: string, type = "member_update") => ({ id, type, memberId, receivedAt });

describe("the webhook inbox", () => {
  it("sits beside the snapshot in a file of its own", () => {
    expect(inboxPathFor("/var/lib/bs/benefits-sync.db")).toBe("/var/lib/bs/benefits-sync.inbox.db");
    expect(inboxPathFor("snap.sqlite")).toBe("snap.inbox.db");
    expect(inboxPathFor("snap")).toBe("snap.inbox.db");
  });

  it("keeps a repeated event id once, survives a reopen, and records other types without acting on them", () => {
    const path = join(dir(), "x.inbox.db");
    const inbox = Inbox.open(path);
    expect(inbox.accept([ev("e1", "m1", "2026-11-24T10:00:00Z"), ev("e2", "m2", "2026-11-24T10:00:01Z"), ev("e1", "m1", "2026-11-24T10:00:02Z")])).toEqual([true, true, false]);
    expect(inbox.accept([ev("e3", null, "2026-11-24T10:00:03Z", "group_update"), ev("e2", "m2", "2026-11-24T10:00:04Z")])).toEqual([true, false]);
    inbox.close();
    expect(statSync(path).mode & 0o777).toBe(0o600);
    const again = Inbox.open(path);
    expect(again.status()).toMatchObject({ pending: 2, ignored: 1, applied: 0, oldestPendingAt: "2026-11-24T10:00:00Z", parked: [] });
    again.close();
  });

  it("hands out each member once with all its events, oldest member first, and only when due", () => {
    const inbox = Inbox.open(join(dir(), "i.db"));
    inbox.accept([ev("a1", "mA", "2026-11-24T10:00:05Z"), ev("b1", "mB", "2026-11-24T10:00:01Z"), ev("a2", "mA", "2026-11-24T10:00:09Z")]);
    expect(inbox.due("2026-11-24T10:00:00Z", 10)).toEqual([]);
    expect(inbox.due("2026-11-24T10:00:06Z", 10)).toEqual([
      { memberId: "mB", eventIds: ["b1"], attempts: 0, firstReceivedAt: "2026-11-24T10:00:01Z" },
      // Its oldest event's receipt: the apply lag is counted from it.
      { memberId: "mA", eventIds: ["a1", "a2"], attempts: 0, firstReceivedAt: "2026-11-24T10:00:05Z" },
    ]);
    expect(inbox.due("2026-11-24T10:01:00Z", 1).map((d) => d.memberId)).toEqual(["mB"]);
    inbox.close();
  });

  it("retries a failed member later, parks it with its reason at the last attempt, and a later event of it is pending again", () => {
    const inbox = Inbox.open(join(dir(), "i.db"));
    inbox.accept([ev("a1", "mA", "2026-11-24T10:00:00Z")]);
    inbox.failed(["a1"], "HTTP 503 from GET /v1/members/{id}", "2026-11-24T10:00:01Z", "2026-11-24T10:00:31Z", 2);
    expect(inbox.due("2026-11-24T10:00:30Z", 10)).toEqual([]);
    expect(inbox.due("2026-11-24T10:00:31Z", 10)).toEqual([{ memberId: "mA", eventIds: ["a1"], attempts: 1, firstReceivedAt: "2026-11-24T10:00:00Z" }]);
    inbox.failed(["a1"], "HTTP 503 from GET /v1/members/{id}", "2026-11-24T10:00:32Z", "2026-11-24T10:01:32Z", 2);
    expect(inbox.due("2026-11-24T11:00:00Z", 10)).toEqual([]);
    expect(inbox.status().parked).toEqual([{ id: "a1", memberId: "mA", reason: "HTTP 503 from GET /v1/members/{id}", at: "2026-11-24T10:00:32Z" }]);
    inbox.accept([ev("a2", "mA", "2026-11-24T10:05:00Z")]);
    expect(inbox.due("2026-11-24T11:00:00Z", 10)).toEqual([{ memberId: "mA", eventIds: ["a2"], attempts: 0, firstReceivedAt: "2026-11-24T10:05:00Z" }]);
    inbox.applied(["a2"], 7, "2026-11-24T11:00:01Z");
    expect(inbox.status()).toMatchObject({ pending: 0, applied: 1, lastAppliedAt: "2026-11-24T11:00:01Z", lastAppliedRun: 7 });
    inbox.close();
  });

  it("prunes finished events older than the cut, never a pending one", () => {
    const inbox = Inbox.open(join(dir(), "i.db"));
    inbox.accept([ev("a1", "mA", "2026-10-01T00:00:00Z"), ev("g1", null, "2026-10-01T00:00:00Z", "group_update"), ev("b1", "mB", "2026-10-01T00:00:00Z")]);
    inbox.applied(["a1"], 3, "2026-10-01T00:00:01Z");
    expect(inbox.prune("2026-10-01T00:00:01Z")).toBe(1); // the ignored one, finished when received
    expect(inbox.prune("2026-11-01T00:00:00Z")).toBe(1); // the applied one
    expect(inbox.status()).toMatchObject({ pending: 1, applied: 0, ignored: 0 });
    expect(inbox.accept([ev("a1", "mA", "2026-11-02T00:00:00Z")])).toEqual([true]); // its id is forgotten with it
    inbox.close();
  });

  it("refuses another application's SQLite file and leaves its bytes as they were", () => {
    const path = join(dir(), "other.db");
    const other = new BetterSqlite3(path);
    other.exec("CREATE TABLE notes (t TEXT); INSERT INTO notes VALUES ('keep me')");
    other.close();
    const before = readFileSync(path);
    expect(() => Inbox.open(path)).toThrow(/is not a benefits-sync inbox.*Nothing was changed/);
    expect(readFileSync(path).equals(before)).toBe(true);
  });
});

import { spawnSync } from "node:child_process";
import { appendFileSync, mkdtempSync, readFileSync, rmSync, statSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { ApplyJournal, JournalBusyError } from "../../../src/eligibility/apply-journal.js";

let dir: string;
beforeEach(() => void (dir = mkdtempSync(join(tmpdir(), "bsync-journal-"))));
afterEach(() => rmSync(dir, { recursive: true, force: true }));

const at = "2026-01-01T00:00:00.000Z";

describe("the apply journal", () => {
  it("keeps open the writes with no settled outcome, across a reopen, and ignores a line a crash cut short", () => {
    const path = join(dir, "j", "gp.journal.jsonl");
    const j = ApplyJournal.open(path);
    j.append({ t: "intent", id: "a", kind: "add-subscriber", lines: [2], tokens: ["t2"], at });
    j.append({ t: "accepted", id: "a", enrollmentRequestId: "er1", at });
    j.append({ t: "intent", id: "b", kind: "terminate", lines: [3], tokens: ["t3"], at });
    j.append({ t: "outcome", id: "b", outcome: "succeeded", settled: true, at });
    j.append({ t: "intent", id: "c", kind: "add-dependent", lines: [4], tokens: ["t4"], at });
    j.append({ t: "outcome", id: "c", outcome: "unsettled", settled: false, at });
    j.close();
    appendFileSync(path, '{"t":"outcome","id":"a","outcome":"succ');
    expect(statSync(path).mode & 0o777).toBe(0o600);
    const again = ApplyJournal.open(path);
    expect(again.openWrites().map((w) => [w.intent.id, w.enrollmentRequestId])).toEqual([
      ["a", "er1"],
      ["c", undefined],
    ]);
    again.close();
  });

  it("is held by one apply at a time; a lock left by a process that is gone is taken over", () => {
    const path = join(dir, "gp.journal.jsonl");
    const first = ApplyJournal.open(path);
    expect(() => ApplyJournal.open(path)).toThrow(JournalBusyError);
    expect(() => ApplyJournal.open(path)).toThrow(`pid ${process.pid}`);
    first.close();
    const gone = spawnSync(process.execPath, ["-e", "process.stdout.write(String(process.pid))"]).stdout.toString();
    writeFileSync(`${path}.lock`, gone);
    const second = ApplyJournal.open(path);
    expect(JSON.parse(readFileSync(`${path}.lock`, "utf8"))).toMatchObject({ pid: process.pid });
    second.close();
  });
});

/**
 * The scheduler's retention (src/jobs/retention.ts): the bound a setting means on a day, and the
 * log line each outcome gives, on a real snapshot file with runs recorded by the store.
 */
import { describe, expect, it } from "vitest";
import { retain, retentionBound } from "../../../src/jobs/retention.js";
import { deliver } from "../../../src/sinks/ledger.js";
import { useTempStores } from "../../helpers/temp-store.js";

const setup = useTempStores();

/** `n` succeeded sync runs, each started a day after the last from 2026-11-01. */
function runs(db: ReturnType<typeof setup>["db"], n: number): void {
  for (let i = 0; i < n; i++) {
    const day = `2026-11-${String(i + 1).padStart(2, "0")}T02:00:00.000Z`;
    db.prepare("INSERT INTO _runs (job, status, started_at, finished_at, options) VALUES ('sync', 'succeeded', ?, ?, '{}')").run(day, day);
  }
}

describe("retention", () => {
  it("keepDays means the runs that started on or after that many days ago (UTC); keepRuns is passed on", () => {
    expect(retentionBound({ keepDays: 30 }, new Date("2026-11-28T01:00:00Z"))).toEqual({ before: "2026-10-29" });
    expect(retentionBound({ keepRuns: 5 }, new Date())).toEqual({ keepRuns: 5 });
  });

  it("logs what it pruned, that there was nothing, or what held it back; never throws", async () => {
    const t = setup();
    runs(t.db, 5);
    const none = { outputs: [], reconcileJobs: [] };
    const now = () => new Date("2026-11-06T00:00:00Z");
    expect(retain(t.db, { keepRuns: 3 }, none, now)).toMatchObject({ event: "retention.pruned", bound: "--keep-runs 3", historyFromRun: 3, runs: 2 });
    expect(retain(t.db, { keepRuns: 3 }, none, now)).toEqual({ event: "retention.nothing", bound: "--keep-runs 3" });
    await deliver(t.db, "csv:/data/x", 3, () => "ok");
    const held = retain(t.db, { keepDays: 1 }, none, now);
    expect(held).toMatchObject({ event: "retention.held", bound: "--before 2026-11-05", holds: [{ kind: "output", name: "csv:/data/x", needsRun: 4 }] });
    await deliver(t.db, "csv:/data/x", 5, () => "ok");
    t.db.exec("DROP TABLE _prunes");
    expect(retain(t.db, { keepRuns: 1 }, { outputs: [], reconcileJobs: [] }, now)).toMatchObject({ event: "retention.failed", bound: "--keep-runs 1" });
  });
});

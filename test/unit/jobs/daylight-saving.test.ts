/**
 * Fire times across the 2026 daylight-saving changes, by cron's rule: a fixed time that falls in
 * the spring gap runs once at the first valid time after it; a fixed time that shows twice in the
 * autumn runs once, the first time; a job that runs every hour follows the real hours. The
 * expected instants are worked out by hand from the zones' rules (New York: 2026-03-08 02:00 EST
 * -> 03:00 EDT at 07:00Z, 2026-11-01 02:00 EDT -> 01:00 EST at 06:00Z; London: 2026-03-29 01:00
 * GMT -> 02:00 BST at 01:00Z, 2026-10-25 02:00 BST -> 01:00 GMT at 01:00Z).
 */
import { describe, expect, it } from "vitest";
import { nextFire, previousFire } from "../../../src/jobs/registry.js";

const ny = (schedule: string) => ({ schedule, timezone: "America/New_York" });
const london = (schedule: string) => ({ schedule, timezone: "Europe/London" });
const next = (job: { schedule: string; timezone: string }, after: string) => nextFire(job, new Date(after))?.toISOString();
const prev = (job: { schedule: string; timezone: string }, now: string) => previousFire(job, new Date(now))?.toISOString();

/** The fires from `from` (exclusive) to `to`, by asking for the next one again and again. */
function firesBetween(job: { schedule: string; timezone: string }, from: string, to: string): string[] {
  const out: string[] = [];
  for (let t = nextFire(job, new Date(from)); t && t < new Date(to); t = nextFire(job, t)) out.push(t.toISOString());
  return out;
}

describe("fire times across daylight saving (America/New_York, 2026)", () => {
  it("a 02:30 job runs at 03:00 EDT on the spring-forward day, once", () => {
    expect(firesBetween(ny("30 2 * * *"), "2026-03-07T00:00:00Z", "2026-03-10T00:00:00Z")).toEqual([
      "2026-03-07T07:30:00.000Z", // 02:30 EST
      "2026-03-08T07:00:00.000Z", // 02:30 does not exist: 03:00 EDT
      "2026-03-09T06:30:00.000Z", // 02:30 EDT
    ]);
    expect(prev(ny("30 2 * * *"), "2026-03-08T07:00:30Z")).toBe("2026-03-08T07:00:00.000Z");
    expect(prev(ny("30 2 * * *"), "2026-03-08T06:59:00Z")).toBe("2026-03-07T07:30:00.000Z");
  });

  it("a 01:30 job runs once on the fall-back day, at the first 01:30", () => {
    expect(firesBetween(ny("30 1 * * *"), "2026-10-31T00:00:00Z", "2026-11-03T00:00:00Z")).toEqual([
      "2026-10-31T05:30:00.000Z", // 01:30 EDT
      "2026-11-01T05:30:00.000Z", // 01:30 EDT; not again at 01:30 EST (06:30Z)
      "2026-11-02T06:30:00.000Z", // 01:30 EST
    ]);
    expect(prev(ny("30 1 * * *"), "2026-11-01T06:45:00Z")).toBe("2026-11-01T05:30:00.000Z");
  });

  it("several times in the gap make one fire; a time after the gap is not run twice", () => {
    expect(firesBetween(ny("0,30 2,3 * * *"), "2026-03-08T05:00:00Z", "2026-03-08T09:00:00Z")).toEqual([
      "2026-03-08T07:00:00.000Z", // 02:00, 02:30 and 03:00 EDT: one fire
      "2026-03-08T07:30:00.000Z", // 03:30 EDT
    ]);
  });

  it("an hourly job follows the real hours: no 02:15 in spring, 01:15 twice in autumn", () => {
    expect(firesBetween(ny("15 * * * *"), "2026-03-08T05:00:00Z", "2026-03-08T09:00:00Z")).toEqual([
      "2026-03-08T05:15:00.000Z",
      "2026-03-08T06:15:00.000Z",
      "2026-03-08T07:15:00.000Z",
      "2026-03-08T08:15:00.000Z",
    ]);
    expect(firesBetween(ny("15 * * * *"), "2026-11-01T04:00:00Z", "2026-11-01T08:00:00Z")).toEqual([
      "2026-11-01T04:15:00.000Z",
      "2026-11-01T05:15:00.000Z",
      "2026-11-01T06:15:00.000Z",
      "2026-11-01T07:15:00.000Z",
    ]);
  });

  it("over the whole year, a daily job fires on each local day exactly once", () => {
    const localDay = (iso: string) => new Intl.DateTimeFormat("en-CA", { timeZone: "America/New_York" }).format(new Date(iso));
    for (const schedule of ["30 2 * * *", "30 1 * * *"]) {
      const days = firesBetween(ny(schedule), "2026-01-01T12:00:00Z", "2027-01-01T12:00:00Z").map(localDay);
      expect(days, schedule).toHaveLength(365);
      expect(new Set(days).size, schedule).toBe(365);
    }
  });
});

describe("fire times across daylight saving (Europe/London, 2026)", () => {
  it("a 01:30 job runs at 02:00 BST on 2026-03-29 and once on 2026-10-25", () => {
    expect(firesBetween(london("30 1 * * *"), "2026-03-28T00:00:00Z", "2026-03-31T00:00:00Z")).toEqual([
      "2026-03-28T01:30:00.000Z",
      "2026-03-29T01:00:00.000Z",
      "2026-03-30T00:30:00.000Z",
    ]);
    expect(firesBetween(london("30 1 * * *"), "2026-10-24T00:00:00Z", "2026-10-27T00:00:00Z")).toEqual([
      "2026-10-24T00:30:00.000Z",
      "2026-10-25T00:30:00.000Z",
      "2026-10-26T01:30:00.000Z",
    ]);
  });
});

/**
 * The jobs as configured: the config file's `jobs` settings applied, every mistake one error that
 * names its key; fire times in the job's time zone.
 */
import { describe, expect, it } from "vitest";
import { Config } from "../../../src/config/schema.js";
import { ConfigError } from "../../../src/errors.js";
import { defineJob } from "../../../src/jobs/job.js";
import { effectiveJobs, findJob, nextFire, previousFire } from "../../../src/jobs/registry.js";
import { JOBS } from "../../../jobs/index.js";

const config = (input: Record<string, unknown>) => Config.parse(input);

describe("the job registry", () => {
  it("has the scheduled jobs, each enabled, delivering to every configured sink unless told otherwise", () => {
    const jobs = effectiveJobs(config({ sinks: { lake: { type: "folder", dir: "lake" } } }));
    expect(jobs.map((j) => [j.name, j.schedule, j.enabled, j.sinks])).toEqual([
      ["nightly-claims-export", "0 2 * * *", true, ["lake"]],
      ["hourly-member-sync", "15 * * * *", true, ["lake"]],
      ["daily-groups-designs", "30 1 * * *", true, ["lake"]],
      ["weekly-full-walk", "0 3 * * 0", true, ["lake"]],
      ["monthly-reconcile", "0 6 1 * *", true, ["lake"]],
    ]);
    expect(JOBS.find((j) => j.name === "nightly-claims-export")?.resources).toEqual(["groups", "claims"]);
  });

  it("the config enables, disables, reschedules and re-routes a job by name", () => {
    const jobs = effectiveJobs(
      config({
        sinks: { lake: { type: "folder", dir: "lake" }, wh: { type: "postgres", url: "postgres://x@h/db" } },
        jobs: { "weekly-full-walk": { enabled: false }, "nightly-claims-export": { schedule: "30 1 * * *", timezone: "America/Chicago", sinks: ["wh"], heartbeatUrl: "http://hc.example/p" } },
      }),
    );
    expect(findJob(jobs, "weekly-full-walk").enabled).toBe(false);
    expect(findJob(jobs, "nightly-claims-export")).toMatchObject({ schedule: "30 1 * * *", timezone: "America/Chicago", sinks: ["wh"], heartbeatUrl: "http://hc.example/p" });
  });

  it("a job file may name its sinks; the config's own list wins; a name the config lacks is an error", () => {
    const own = defineJob({ name: "lake-only", description: "", schedule: "0 4 * * *", resources: ["members"], sinks: ["lake"] });
    const sinks = { lake: { type: "folder", dir: "lake" }, other: { type: "folder", dir: "other" } };
    expect(effectiveJobs(config({ sinks }), [own])[0]!.sinks).toEqual(["lake"]);
    expect(effectiveJobs(config({ sinks, jobs: { "lake-only": { sinks: ["other"] } } }), [own])[0]!.sinks).toEqual(["other"]);
    expect(() => effectiveJobs(config({}), [own])).toThrow(/lake-only\.sinks \(in its file under jobs\/\): no sink named "lake"/);
  });

  it("every mistake is one configuration error naming its key; an unknown job name says which jobs there are", () => {
    let err: unknown;
    try {
      effectiveJobs(config({ jobs: { nightly: {}, "hourly-member-sync": { schedule: "every hour", timezone: "Mars/Olympus", sinks: ["nowhere"] } } }));
    } catch (e) {
      err = e;
    }
    expect(err).toBeInstanceOf(ConfigError);
    expect((err as ConfigError).problems).toEqual([
      "jobs.nightly: no such job; the jobs are nightly-claims-export, hourly-member-sync, daily-groups-designs, weekly-full-walk, monthly-reconcile",
      'jobs.hourly-member-sync.schedule: expected a cron expression (minute hour day month weekday), got "every hour"',
      'jobs.hourly-member-sync.timezone: expected an IANA time zone such as "America/Chicago", got "Mars/Olympus"',
      'jobs.hourly-member-sync.sinks: no sink named "nowhere" in "sinks"',
    ]);
    expect(() => findJob(effectiveJobs(config({})), "nope")).toThrow(/no job named "nope"; the jobs are nightly-claims-export/);
    expect(() => defineJob({ name: "Bad Name", description: "", schedule: "* * * * *", resources: ["members"] })).toThrow(/lowercase/);
  });

  it("fire times are read in the job's time zone, across a daylight-saving change", () => {
    const chicago = { schedule: "0 2 * * *", timezone: "America/Chicago" };
    // 2026-03-08 is the spring change in Chicago: 02:00 does not exist that night.
    expect(nextFire(chicago, new Date("2026-03-06T12:00:00Z"))?.toISOString()).toBe("2026-03-07T08:00:00.000Z");
    expect(nextFire(chicago, new Date("2026-03-10T12:00:00Z"))?.toISOString()).toBe("2026-03-11T07:00:00.000Z");
    expect(previousFire(chicago, new Date("2026-03-11T07:00:30Z"))?.toISOString()).toBe("2026-03-11T07:00:00.000Z");
    expect(previousFire({ schedule: "0 3 * * 0", timezone: "UTC" }, new Date("2026-11-25T00:00:00Z"))?.toISOString()).toBe("2026-11-22T03:00:00.000Z");
  });
});

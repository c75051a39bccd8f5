/**
 * The scheduler's metrics for `GET /metrics` (prom-client): the gauges its textfile carries
 * (job-metrics.ts, read from the snapshot when scraped) and, since it started, each job's runs by
 * how they ended and their durations as a histogram in seconds. Labels hold a job's name, a
 * resource, an outcome: never an id of a person. docs/metrics.md lists them.
 */
import type { Database } from "better-sqlite3";
import { Counter, Gauge, Histogram, Registry } from "prom-client";
import type { Job } from "./job.js";
import { jobGauges } from "./job-metrics.js";
import { JobRunDuration, JobRuns, promOf, type RunOutcome } from "../metrics/families.js";

export function schedulerRegistry(db: Database, jobs: readonly Job[]): { registry: Registry; onOutcome: (job: string, outcome: RunOutcome, seconds: number) => void } {
  const registry = new Registry();
  for (const family of jobGauges(db, jobs)) {
    new Gauge({
      name: `benefits_sync_${family.name}`,
      help: family.help,
      labelNames: [...family.labelNames],
      registers: [registry],
      collect() {
        this.reset();
        // Read at each scrape (a few indexed reads of the run history, per family): never stale.
        const now = jobGauges(db, jobs).find((f) => f.name === family.name)!;
        for (const s of now.samples) this.set(s.labels, s.value);
      },
    });
  }
  const runs = new Counter({ ...promOf(JobRuns), registers: [registry] });
  const durations = new Histogram({ ...promOf(JobRunDuration), registers: [registry] });
  return {
    registry,
    onOutcome: (job, outcome, seconds) => {
      runs.inc({ job, outcome });
      if (outcome !== "busy") durations.observe({ job }, seconds);
    },
  };
}

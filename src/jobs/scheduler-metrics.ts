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
import type { FireOutcome } from "./scheduler.js";

/** Buckets of a job's run, in seconds: a webhook drain takes a second, a first sync of a million members minutes. */
const RunBuckets = [1, 5, 15, 30, 60, 120, 300, 600, 1200, 1800, 3600, 7200];

export function schedulerRegistry(db: Database, jobs: readonly Job[]): { registry: Registry; onOutcome: (job: string, outcome: FireOutcome, seconds: number) => void } {
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
  const runs = new Counter({
    name: "benefits_sync_job_runs_total",
    help: "Fires of each job since the scheduler started, by how they ended (succeeded, failed, interrupted, busy: skipped while another run held the snapshot).",
    labelNames: ["job", "outcome"],
    registers: [registry],
  });
  const durations = new Histogram({
    name: "benefits_sync_job_run_duration_seconds",
    help: "How long each run of a job took, since the scheduler started.",
    labelNames: ["job"],
    buckets: RunBuckets,
    registers: [registry],
  });
  return {
    registry,
    onOutcome: (job, outcome, seconds) => {
      runs.inc({ job, outcome });
      if (outcome !== "busy") durations.observe({ job }, seconds);
    },
  };
}

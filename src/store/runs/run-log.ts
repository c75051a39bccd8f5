import type { Database } from "better-sqlite3";

export const RunStatuses = ["running", "succeeded", "failed"] as const;
export type RunStatus = (typeof RunStatuses)[number];

/**
 * The job of the webhook worker's runs (src/webhooks/apply.ts). Each looks a few members up by id
 * and walks nothing, so it is no step of a walk: a sync resumes a failed walk across them.
 */
export const WEBHOOK_JOB = "webhooks";

export interface RunRow {
  run_id: number;
  job: string;
  status: RunStatus;
  started_at: string;
  finished_at: string | null;
  options: string;
  resumed_from: number | null;
  pid: number | null;
  host: string | null;
  error: string | null;
  /** JSON array of the resources that were empty when the run's chain began. */
  fresh: string;
  /** Which store instance runs it (random per instance): tells a run of this process from another's. */
  owner: string | null;
  /** ISO time until which the run holds the snapshot unless it renews its lease. */
  lease_until: string | null;
}

export function listRuns(db: Database, limit = 50): Record<string, unknown>[] {
  return db.prepare("SELECT * FROM runs ORDER BY run_id DESC LIMIT ?").all(limit) as Record<string, unknown>[];
}

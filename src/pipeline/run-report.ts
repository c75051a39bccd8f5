/** What a sync run reports: its counts per resource, or why no run started. */
import type { ResourceCounts } from "../store/runs/counts.js";
import type { StoredResource, WalkedResource } from "../store/schema/resources.js";
import type { NewFieldPath } from "./new-fields-notice.js";

export interface SyncProgress {
  readonly resource: WalkedResource;
  readonly scope: string;
  readonly pages: number;
  readonly records: number;
  readonly done: boolean;
  /** The run's records of this resource seen so far, as its summary counts them (once the store has the page). */
  readonly seen?: number;
}

/**
 * What one run did, or why none started (`runId` null, nothing changed): `busy` when another live
 * run holds the snapshot (try again later), `failed` when the snapshot could not be claimed at all.
 */
export type RunReport = StartedRunReport | NotStartedReport;

export interface NotStartedReport {
  readonly runId: null;
  readonly status: "busy" | "failed";
  readonly dryRun: boolean;
  readonly resumedFrom?: undefined;
  readonly resources: Partial<Record<StoredResource, ResourceCounts>>;
  readonly error: { readonly code: string; readonly message: string };
  readonly durationMs: number;  readonly newFields?: undefined;
}

export interface StartedRunReport {
  readonly runId: number;
  readonly status: "succeeded" | "failed";
  readonly dryRun: boolean;
  readonly resumedFrom?: number;
  readonly resources: Partial<Record<StoredResource, ResourceCounts>>;
  readonly error?: { readonly code: string; readonly message: string };
  readonly durationMs: number;
  /**
   * The run failed as it started, after its row was committed (see store/runs/start-failure.ts):
   * `recorded`, whether the run log says so yet (else the next run marks it failed).
   */
  readonly failedAtStart?: { readonly recorded: boolean };
  /** Field paths this run was the first to see (src/store/walk/field-paths.ts); absent when none. */
  readonly newFields?: readonly NewFieldPath[];
}

/** The report of a run that did not start: `busy` when the snapshot was taken (exit 75), else `failed`. */
export function notStarted(error: { readonly code: string; readonly message: string }, dryRun: boolean, durationMs: number): NotStartedReport {
  const busy = error.code === "SNAPSHOT_BUSY" || error.code.startsWith("SQLITE_BUSY");
  return { runId: null, status: busy ? "busy" : "failed", dryRun, resources: {}, error, durationMs };
}

/** The shapes a run passes between the parts of the snapshot store. No logic beyond copying. */
import type { ResourceCounts } from "./counts.js";
import type { PiiMode } from "../pii/pii.js";
import type { StoredResource, WalkedResource } from "../schema/resources.js";
import type { Scope } from "../walk/scopes.js";

export interface SnapshotOptions {
  readonly piiKey: Buffer;
  readonly piiMode?: PiiMode;
  /** The field that identifies each walked resource's items (api-shapes: configurable). */
  readonly idFields?: Partial<Record<WalkedResource, string>>;
  /** Commit a group of pages when this many pages or this much time has gone into it. */
  readonly commitEveryPages?: number;
  /**
   * ...or this many pages recognised by their bytes (default 256, or `commitEveryPages` when that
   * is given). Such a page writes only the walk's bookkeeping and costs nothing to walk again; the
   * store's work on a no-change re-sync at 100k members, replayed, took 459 to 494 ms committing
   * every 32 of them and 396 to 437 ms every 256.
   */
  readonly commitEveryKnownPages?: number;
  readonly commitEveryMs?: number;
  /**
   * How long a run holds the snapshot without renewing its lease (every commit renews it, and the
   * sync renews it while it waits on the network). A run whose lease lapsed is dead: the next run
   * marks it failed and resumes its walk. Default 2 minutes.
   */
  readonly leaseMs?: number;
  readonly now?: () => Date;
}

export interface DeletePolicy {
  /** Fail the run when deletes in a resource exceed both this share of its scope... */
  readonly maxDeleteShare: number;
  /** ...and this many records. */
  readonly maxDeleteCount: number;
  /**
   * A complete scope that walked no record at all, while the run would delete at least this many
   * records (or children) of it, fails the run too: one group's members, or every plan, dropping
   * to none is a broken listing far more often than a real change.
   */
  readonly emptyScopeMin: number;
  /** Delete after this many consecutive complete absences (1 = at the first). */
  readonly absenceRuns: number;
  /** Let the run delete past the guard (`--allow-deletes`). */
  readonly allowDeletes: boolean;
}

export const defaultDeletePolicy: DeletePolicy = {
  maxDeleteShare: 0.1,
  maxDeleteCount: 50,
  emptyScopeMin: 5,
  absenceRuns: 1,
  allowDeletes: false,
};

export interface ScopeState {
  readonly cursor: string | undefined;
  readonly complete: boolean;
  readonly pages: number;
  readonly records: number;
}

/** The run a SnapshotStore is applying pages for. */
export interface ActiveRun {
  readonly runId: number;
  readonly resumedFrom: number | undefined;
  readonly dryRun: boolean;
  counts: Map<StoredResource, ResourceCounts>;
  readonly scopes: Map<string, Scope>;
  /** Scopes this run walks again from their start although the chain saw some of their pages. */
  readonly rewalked: Set<string>;
  /** Items quarantined so far per scope (a resumed walk's included): such a scope is never complete. */
  quarantinedByScope: Map<string, number>;
  /**
   * False for a run of lookups only (the webhook worker's): it walks nothing, so it leaves the
   * state of a failed walk it comes between (seen ids, absences, suspects) to that walk's resume.
   */
  readonly walks: boolean;
  /** Resources with no current record when the run's chain began: no delete can be proven. */
  readonly fresh: ReadonlySet<StoredResource>;
  /** Fresh resources in the first run of a chain: empty, so no record needs looking up. */
  readonly empty: ReadonlySet<StoredResource>;
  /**
   * Per resource, the highest version id when the run began: a version above it was written by
   * this run, and is amended rather than replaced, so that a record changes once per run.
   */
  readonly vidsBefore: ReadonlyMap<StoredResource, number>;
  /**
   * Set when applying a page failed: what the open group of pages did was rolled back, and the
   * run applies nothing more (a later page's checkpoint must not move the cursor past the failed
   * one, nor mark its scope complete). The run can only end failed.
   */
  failed?: { readonly code: string; readonly message: string };
  /** Claims on the pages of the open group: what a rollback would lose. */
  claimsInGroup: string[];
  /**
   * Claims the run read but did not keep (their page failed, was rolled back with its group, or
   * came after the failure). A claim may have come back into the window on such a page: its
   * stored date, outside the window, would keep every later walk from missing it, so a failed
   * run leaves these to be looked up (see `_suspects`).
   */
  readonly unkeptClaims: Set<string>;
}

export interface RunFailure {
  readonly code: string;
  readonly message: string;
}

export interface RunOutcome {
  readonly runId: number;
  readonly status: "succeeded" | "failed";
  readonly counts: Record<StoredResource, ResourceCounts>;
  readonly resumedFrom: number | undefined;
  /** Why the run failed (the run log keeps it as `CODE: message`). */
  readonly failure?: RunFailure;
  readonly dryRun?: boolean;
}

export function countsObject(run: ActiveRun): Record<StoredResource, ResourceCounts> {
  return Object.fromEntries([...run.counts].map(([k, v]) => [k, { ...v }])) as Record<StoredResource, ResourceCounts>;
}

/** A deep copy of a run's counters, to put back when a group of pages is rolled back. */
export function copyCounters(run: ActiveRun): { counts: Map<StoredResource, ResourceCounts>; quarantined: Map<string, number> } {
  return { counts: new Map([...run.counts].map(([k, v]) => [k, { ...v }])), quarantined: new Map(run.quarantinedByScope) };
}

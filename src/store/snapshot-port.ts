import type { RunOutcome, ScopeState, DeletePolicy, SnapshotStore } from "./snapshot.js";
import type { Scope } from "./walk/scopes.js";
import type { EncodingOptions, PreparedPage, Problem } from "./walk/prepare-page.js";
import type { StoredResource } from "./schema/resources.js";
import type { DeleteCandidates } from "./walk/delete-plan.js";

/** One walked page on its way to the snapshot: parsed items, or the items' JSON text. */
export interface PageInput {
  readonly items?: readonly unknown[] | undefined;
  readonly raw?: readonly string[] | undefined;
  /** The page already validated and encoded by the caller (see {@link SnapshotPort.encoding}). */
  readonly prepared?: PreparedPage | undefined;
  /** A fingerprint of the page's text and the cursor it was asked with: the store keeps it. */
  readonly pageFp?: { readonly startAfter: string | undefined; readonly fp: number } | undefined;
  /** The page was recognised by its text: nothing else is given. */
  readonly known?: boolean | undefined;
  /** Items known by id and text only, for the fingerprint fast path; `problems` are the others. */
  readonly lazy?: { readonly ids: readonly string[]; readonly raw: readonly string[]; readonly problems: readonly Problem[] } | undefined;
  readonly next: string | undefined;
  readonly end: boolean;
}

export interface RunStart {
  readonly runId: number;
  /** How often to renew the run's lease while the walk waits on the network. */
  readonly heartbeatMs: number;
  readonly resumedFrom: number | undefined;
  readonly dryRun: boolean;
  /**
   * Resources that were empty when the run began: all inserts, so the walk may encode their pages
   * itself (see the sync's STORE_BUSY_PAGES).
   */
  readonly empty: readonly StoredResource[];
}

/**
 * The slice of the snapshot the sync engine drives, asynchronous so that it can live on its own
 * thread: there SQLite's work runs beside the walk's HTTP and JSON work instead of after it.
 * Calls are applied in the order they are made.
 */
export interface SnapshotPort {
  /**
   * Set when the store runs on another thread: the caller then validates and encodes pages
   * itself (an {@link Encoder} with these options), so that this work runs beside SQLite's.
   */
  readonly encoding?: EncodingOptions;
  startRun(job: string, options: Record<string, unknown>, flags: { dryRun?: boolean; resume?: boolean }): Promise<RunStart>;
  beginScope(scope: Scope): Promise<ScopeState>;
  /** The pages of a scope the snapshot can recognise by their text: `[cursor, fp, next]`, asked for as its walk begins. */
  knownPages(scope: string): Promise<readonly (readonly [string, number, string | null])[]>;
  /**
   * Apply a page; resolves with the run's records of the page's resource seen so far (the count
   * its summary reports), which the walk's progress shows. A wrapper may resolve with nothing.
   */
  applyPage(scope: Scope, page: PageInput): Promise<number | void>;
  finishRun(policy: DeletePolicy, failure?: { code?: string; message: string }): Promise<RunOutcome>;
  /** Claims the walk would prove gone by their stored date alone, by member (see `windowMissed`). */
  claimsToVerify(): Promise<{ memberId: string | null; ids: string[] }[]>;
  /** What the run would delete, to be confirmed before finishRun (see `deleteCandidates`). */
  deleteCandidates(): Promise<DeleteCandidates>;
  /** Renew the run's lease; fire and forget. */
  heartbeat(): void;
  /** The current groups (a resumed groups walk saw only part of the list). */
  currentGroups(): Promise<unknown[]>;
  /** The newest run's id, or SnapshotBusyError while a live run holds the snapshot (see SnapshotStore.runMark). */
  runMark(): Promise<number>;
}

/** Items given as text are parsed here; one that is not JSON is quarantined as "not a JSON object". */
export function itemsOf(page: PageInput): unknown[] {
  if (page.items) return [...page.items];
  return (page.raw ?? []).map((text) => {
    try {
      return JSON.parse(text) as unknown;
    } catch {
      return null;
    }
  });
}

/** What a port tells the walk when a run starts. */
export function runStart(store: SnapshotStore, run: { runId: number; resumedFrom: number | undefined; dryRun: boolean; empty: ReadonlySet<StoredResource> }): RunStart {
  return { runId: run.runId, heartbeatMs: store.heartbeatMs, resumedFrom: run.resumedFrom, dryRun: run.dryRun, empty: [...run.empty] };
}

/**
 * A port over a store on this thread (tests, small runs). It takes the same path as the store on
 * its own thread: pages are encoded by the walk and recognised by their bytes.
 */
export function inProcessPort(store: SnapshotStore): SnapshotPort {
  return {
    encoding: store.encoder.options,
    startRun: async (job, options, flags) => runStart(store, store.startRun(job, options, flags)),
    beginScope: async (scope) => store.beginScope(scope),
    knownPages: async (scope) => store.knownPages(scope),
    applyPage: async (scope, page) => applyPageInput(store, scope, page),
    finishRun: async (policy, failure) => store.finishRun(policy, failure),
    currentGroups: async () => store.currentGroups(),
    runMark: async () => store.runMark(),
    claimsToVerify: async () => store.claimsToVerify(),
    deleteCandidates: async () => store.deleteCandidates(),
    heartbeat: () => store.heartbeat(),
  };
}

/** Apply a page given in any of its forms; returns the run's records of its resource seen so far. */
export function applyPageInput(store: SnapshotStore, scope: Scope, page: PageInput): number {
  if (page.known && page.pageFp) store.applyKnownPage(scope, page.pageFp.startAfter, page.pageFp.fp, page.next, page.end);
  else if (page.prepared) store.applyPrepared(scope, page.prepared, page.next, page.end, page.pageFp);
  else if (page.lazy) {
    const records = store.encoder.prepareLazy(scope.resource, page.lazy.ids, page.lazy.raw);
    store.applyPrepared(scope, { records, problems: page.lazy.problems }, page.next, page.end, page.pageFp);
  }
  else store.applyPage(scope, itemsOf(page), page.next, page.end, page.raw);
  return store.seenSoFar(scope.resource);
}

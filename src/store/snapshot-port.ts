import type { RunOutcome, ScopeState, DeletePolicy, SnapshotStore } from "./snapshot.js";
import type { Scope } from "./scopes.js";
import type { EncodingOptions, PreparedPage, Problem } from "./prepare-page.js";
import type { StoredResource } from "./resources.js";

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
  readonly resumedFrom: number | undefined;
  readonly dryRun: boolean;
  /** Resources that were empty when the run began: their pages are best encoded up front. */
  readonly empty: readonly StoredResource[];
  /** The pages the snapshot can recognise by their text: `[scope, cursor, fp, next]`. */
  readonly pages: readonly (readonly [string, string, number, string | null])[];
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
  applyPage(scope: Scope, page: PageInput): Promise<void>;
  finishRun(policy: DeletePolicy, failure?: { code?: string; message: string }): Promise<RunOutcome>;
  /** The current groups (a resumed groups walk saw only part of the list). */
  currentGroups(): Promise<unknown[]>;
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

/** A port over a store on this thread (tests, small runs). */
export function inProcessPort(store: SnapshotStore): SnapshotPort {
  return {
    startRun: async (job, options, flags) => {
      const run = store.startRun(job, options, flags);
      return { runId: run.runId, resumedFrom: run.resumedFrom, dryRun: run.dryRun, empty: [...run.empty], pages: store.knownPages() };
    },
    beginScope: async (scope) => store.beginScope(scope),
    applyPage: async (scope, page) => {
      applyPageInput(store, scope, page);
    },
    finishRun: async (policy, failure) => store.finishRun(policy, failure),
    currentGroups: async () => store.currentGroups(),
  };
}

/** Apply a page given in any of its forms. */
export function applyPageInput(store: SnapshotStore, scope: Scope, page: PageInput): void {
  if (page.known && page.pageFp) store.applyKnownPage(scope, page.pageFp.startAfter, page.pageFp.fp, page.next, page.end);
  else if (page.prepared) store.applyPrepared(scope, page.prepared, page.next, page.end, page.pageFp);
  else if (page.lazy) {
    const records = store.encoder.prepareLazy(scope.resource, page.lazy.ids, page.lazy.raw);
    store.applyPrepared(scope, { records, problems: page.lazy.problems }, page.next, page.end, page.pageFp);
  }
  else store.applyPage(scope, itemsOf(page), page.next, page.end, page.raw);
}

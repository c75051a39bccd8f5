import pLimit from "p-limit";
import type { BenefitsSyncError } from "../errors.js";
import type { ResourceCounts } from "../store/counts.js";
import { WalkedResources, type StoredResource, type WalkedResource } from "../store/resources.js";
import { scopeOf, type Scope } from "../store/scopes.js";
import { defaultDeletePolicy, type DeletePolicy, type SnapshotStore } from "../store/snapshot.js";
import type { PageSource } from "../extract/page-source.js";
import { fanOutScopes, groupNumbers, listGroupsOnly, requestFilters, type ClaimsWindow } from "../extract/scopes.js";

export interface SyncProgress {
  readonly resource: WalkedResource;
  readonly scope: string;
  readonly pages: number;
  readonly records: number;
  readonly done: boolean;
}

export interface SyncOptions {
  readonly source: PageSource;
  readonly store: SnapshotStore;
  readonly job?: string;
  /** Which resources to walk; default all four. */
  readonly resources?: readonly WalkedResource[];
  readonly claimsWindow: ClaimsWindow;
  /** How many group walks run at once (each group's cursor chain is sequential). */
  readonly groupConcurrency?: number;
  readonly deletePolicy?: Partial<DeletePolicy>;
  readonly dryRun?: boolean;
  readonly resume?: boolean;
  readonly onProgress?: (p: SyncProgress) => void;
  readonly signal?: AbortSignal;
}

export interface RunReport {
  readonly runId: number;
  readonly status: "succeeded" | "failed";
  readonly dryRun: boolean;
  readonly resumedFrom?: number;
  readonly resources: Partial<Record<StoredResource, ResourceCounts>>;
  readonly error?: { readonly code: string; readonly message: string };
  readonly durationMs: number;
}

/**
 * One run: walk the resources, apply every page to the snapshot with its checkpoint, prove
 * deletes from complete scopes, record the run. Never throws for a failure of the walk: the
 * report says `failed`, the run is recorded failed, and nothing is deleted.
 *
 * @example const report = await sync({ source: client, store, claimsWindow: rollingWindow(new Date(), 90) });
 */
export async function sync(opts: SyncOptions): Promise<RunReport> {
  const started = Date.now();
  const resources = orderResources(opts.resources ?? WalkedResources);
  const run = opts.store.startRun(
    opts.job ?? "sync",
    { resources, claimsWindow: resources.includes("claims") ? opts.claimsWindow : null },
    { dryRun: opts.dryRun ?? false, resume: opts.resume ?? true },
  );
  const abort = new AbortController();
  const onOuterAbort = () => abort.abort(opts.signal?.reason);
  opts.signal?.addEventListener("abort", onOuterAbort, { once: true });
  let failure: { code: string; message: string } | undefined;
  try {
    await walkAll(opts, resources, abort.signal);
  } catch (e) {
    abort.abort(e);
    failure = describe(e);
  } finally {
    opts.signal?.removeEventListener("abort", onOuterAbort);
  }
  const policy = { ...defaultDeletePolicy, ...opts.deletePolicy };
  let outcome;
  try {
    outcome = opts.store.finishRun(policy, failure);
  } catch (e) {
    // The store itself failed (disk full, corrupt file): report it; SQLite rolled back the commit.
    return { runId: run.runId, status: "failed", dryRun: run.dryRun, resources: {}, error: describe(e), durationMs: Date.now() - started };
  }
  const counts: Partial<Record<StoredResource, ResourceCounts>> = {};
  for (const [r, c] of Object.entries(outcome.counts) as [StoredResource, ResourceCounts][]) {
    if (isWalkedOrChild(r, resources)) counts[r] = c;
  }
  const error = outcome.status === "failed" ? outcome.cause ? describe(outcome.cause) : failure ?? { code: "ERROR", message: outcome.error ?? "failed" } : undefined;
  return {
    runId: outcome.runId,
    status: outcome.status,
    dryRun: run.dryRun,
    ...(outcome.resumedFrom !== undefined ? { resumedFrom: outcome.resumedFrom } : {}),
    resources: counts,
    ...(error ? { error } : {}),
    durationMs: Date.now() - started,
  };
}

async function walkAll(opts: SyncOptions, resources: readonly WalkedResource[], signal: AbortSignal): Promise<void> {
  const { store, source } = opts;
  if (resources.includes("designs")) await walkScope(opts, scopeOf("designs"), signal);
  const fanned = resources.filter((r): r is "members" | "claims" => r === "members" || r === "claims");
  let groups: string[] = [];
  if (resources.includes("groups")) {
    const items: unknown[] = [];
    const fresh = await walkScope(opts, scopeOf("groups"), signal, (page) => items.push(...page));
    // A resumed groups walk saw only part of the list: the snapshot holds the rest.
    groups = fresh ? groupNumbers(items) : groupNumbersFromStore(store);
  } else if (fanned.length) {
    groups = groupNumbers(await listGroupsOnly(source, signal));
  }
  const scopes: Scope[] = fanned.flatMap((r) => fanOutScopes(r, groups, opts.claimsWindow));
  const limit = pLimit(Math.max(1, opts.groupConcurrency ?? 4));
  // Register every scope first: deletes are proven against the whole plan, walked or not.
  const states = new Map(scopes.map((s) => [s.key, store.beginScope(s)] as const));
  const results = await Promise.allSettled(
    scopes.map((s) =>
      limit(async () => {
        if (signal.aborted) throw signal.reason;
        await walkScope(opts, s, signal, undefined, states.get(s.key));
      }),
    ),
  );
  const failed = results.find((r): r is PromiseRejectedResult => r.status === "rejected");
  if (failed) throw failed.reason;
}

async function walkScope(
  opts: SyncOptions,
  scope: Scope,
  signal: AbortSignal,
  onItems?: (items: readonly unknown[]) => void,
  known?: { cursor: string | undefined; complete: boolean; pages: number; records: number },
): Promise<boolean> {
  const state = known ?? opts.store.beginScope(scope);
  const fresh = !state.complete && state.cursor === undefined;
  if (state.complete) {
    opts.onProgress?.({ resource: scope.resource, scope: scope.key, pages: state.pages, records: state.records, done: true });
    return fresh;
  }
  let pages = state.pages;
  let records = state.records;
  let ended = false;
  const pageOpts = { signal, ...(state.cursor !== undefined ? { startAfter: state.cursor } : {}) };
  for await (const page of opts.source.pages(scope.resource, requestFilters(scope), pageOpts)) {
    if (signal.aborted) throw signal.reason;
    const end = page.next === undefined;
    opts.store.applyPage(scope, page.items, page.next, end, page.raw);
    onItems?.(page.items);
    pages++;
    records += page.items.length;
    ended = end;
    opts.onProgress?.({ resource: scope.resource, scope: scope.key, pages, records, done: end });
  }
  if (!ended) {
    // An empty list (or a resumed walk whose last page was the end) closes with an empty page.
    opts.store.applyPage(scope, [], undefined, true);
    opts.onProgress?.({ resource: scope.resource, scope: scope.key, pages, records, done: true });
  }
  return fresh;
}

function groupNumbersFromStore(store: SnapshotStore): string[] {
  const rows = store.db.prepare("SELECT data FROM groups").pluck().all() as string[];
  return groupNumbers(rows.map((r) => JSON.parse(r) as unknown));
}

function orderResources(rs: readonly WalkedResource[]): WalkedResource[] {
  return WalkedResources.filter((r) => rs.includes(r));
}

function isWalkedOrChild(r: StoredResource, walked: readonly WalkedResource[]): boolean {
  if (r === "plans") return walked.includes("groups");
  if (r === "coverages") return walked.includes("members");
  return (walked as readonly string[]).includes(r);
}

function describe(e: unknown): { code: string; message: string } {
  if (e instanceof Error) return { code: (e as Partial<BenefitsSyncError>).code ?? e.name, message: e.message };
  return { code: "ERROR", message: String(e) };
}

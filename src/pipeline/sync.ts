import pLimit from "p-limit";
import { notStarted, type RunReport, type SyncProgress } from "./run-report.js";
import type { BenefitsSyncError } from "../errors.js";
import type { ResourceCounts } from "../store/runs/counts.js";
import { isWalkedOrChild, orderResources, WalkedResources, type StoredResource, type WalkedResource } from "../store/schema/resources.js";
import { scopeOf, type Scope } from "../store/walk/scopes.js";
import { SnapshotStore, defaultDeletePolicy, type DeletePolicy, type ScopeState } from "../store/snapshot.js";
import { inProcessPort, itemsOf, type PageInput, type RunStart, type SnapshotPort } from "../store/snapshot-port.js";
import { Encoder } from "../store/walk/prepare-page.js";
import { startedRunOf } from "../store/runs/start-failure.js";
import type { PageSource } from "../extract/page-source.js";
import { fanOutScopes, groupNumbers, type ClaimsWindow } from "../extract/scopes.js";
import { claimLookups, deleteConfirmations, type Keep, type Lookup } from "./delete-lookups.js";
import { KnownPages } from "./known-pages.js";
import { encodePage, pageInputs, type KnownPageMap } from "./page-inputs.js";
import { Attr, inSpan, setActiveAttributes, SpanNames } from "../telemetry/spans.js";
import { walkAttributes } from "./walk-attributes.js";

export type { NotStartedReport, RunReport, StartedRunReport, SyncProgress } from "./run-report.js";

export interface SyncOptions {
  readonly source: PageSource;
  /** The snapshot: a store on this thread, or a port to one on its own thread. */
  readonly store: SnapshotStore | SnapshotPort;
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

/**
 * Pages walked but not yet applied, across all walks: bounds memory when the store lags (a page of
 * 100 members is a few hundred KB once prepared).
 */
const MAX_PAGES_IN_FLIGHT = 48;

/**
 * Pages waiting for the store above which a load from empty is encoded on the walk's thread (see
 * `Walk.apply`). Measured on the benchmark's 100k-member first sync: with every page encoded on
 * the walk's thread, that thread was the bottleneck and the store idle a third of the time.
 */
const STORE_BUSY_PAGES = 8;

/** Rounds of delete confirmations (each may find deletes the previous one caused). */
const MAX_CONFIRM_ROUNDS = 4;

/**
 * One run: walk the resources, apply every page to the snapshot with its checkpoint, prove
 * deletes from complete scopes, record the run. Never throws for a failure of the walk: the
 * report says `failed`, the run is recorded failed, and nothing is deleted.
 *
 * @example const report = await sync({ source: client, store, claimsWindow: rollingWindow(new Date(), 90) });
 */
export async function sync(opts: SyncOptions): Promise<RunReport> {
  const started = Date.now();
  const port = opts.store instanceof SnapshotStore ? inProcessPort(opts.store) : opts.store;
  const resources = orderResources(opts.resources ?? WalkedResources);
  let run: RunStart;
  try {
    run = await port.startRun(
      opts.job ?? "sync",
      { resources, claimsWindow: resources.includes("claims") ? opts.claimsWindow : null },
      { dryRun: opts.dryRun ?? false, resume: opts.resume ?? true },
    );
  } catch (e) {
    // The run's row was committed before the start failed (the disk filled, say): that run failed.
    const left = startedRunOf(e);
    if (left) return { runId: left.startedRunId, status: "failed", dryRun: false, resources: {}, error: describe(e), durationMs: Date.now() - started, failedAtStart: { recorded: left.recorded } };
    // No run was started (another holds the snapshot, or the file cannot be written): say why.
    return notStarted(describe(e), opts.dryRun ?? false, Date.now() - started);
  }
  const abort = new AbortController();
  const onOuterAbort = () => abort.abort(opts.signal?.reason);
  opts.signal?.addEventListener("abort", onOuterAbort, { once: true });
  // The lease lapses unless renewed: commits renew it, and so does this while the walk waits.
  const heartbeat = setInterval(() => port.heartbeat(), run.heartbeatMs);
  heartbeat.unref();
  let failure: { code: string; message: string } | undefined;
  try {
    await new Walk(opts, port, abort, run).all(resources);
  } catch (e) {
    // The first cause wins: a page the store could not apply stops the walk with that error.
    failure = describe(abort.signal.aborted ? abort.signal.reason : e);
    abort.abort(e);
  } finally {
    clearInterval(heartbeat);
    opts.signal?.removeEventListener("abort", onOuterAbort);
  }
  const policy = { ...defaultDeletePolicy, ...opts.deletePolicy };
  let outcome;
  try {
    outcome = await port.finishRun(policy, failure);
  } catch (e) {
    // The store itself failed (disk full, corrupt file): report it; SQLite rolled back the commit.
    return { runId: run.runId, status: "failed", dryRun: run.dryRun, resources: {}, error: describe(e), durationMs: Date.now() - started };
  }
  const counts: Partial<Record<StoredResource, ResourceCounts>> = {};
  for (const [r, c] of Object.entries(outcome.counts) as [StoredResource, ResourceCounts][]) {
    if (isWalkedOrChild(r, resources)) counts[r] = c;
  }
  return {
    runId: outcome.runId,
    status: outcome.status,
    dryRun: run.dryRun,
    ...(outcome.resumedFrom !== undefined ? { resumedFrom: outcome.resumedFrom } : {}),
    resources: counts,
    ...(outcome.failure ? { error: outcome.failure } : {}),
    durationMs: Date.now() - started,
  };
}

/** The walks of one run: designs, groups, then members and claims fanned out by group. */
class Walk {
  private inFlight = 0;
  private readonly waiters: (() => void)[] = [];

  /** Encodes pages on this thread when the store runs on its own. */
  private readonly encoder: Encoder | undefined;

  private readonly empty: ReadonlySet<StoredResource>;

  private readonly signal: AbortSignal;

  private readonly known: KnownPages;

  constructor(
    private readonly opts: SyncOptions,
    private readonly port: SnapshotPort,
    private readonly abort: AbortController,
    run: RunStart,
  ) {
    this.signal = abort.signal;
    this.encoder = port.encoding ? new Encoder(port.encoding) : undefined;
    this.known = new KnownPages(port, this.encoder !== undefined);
    this.empty = new Set(run.empty);
  }

  async all(resources: readonly WalkedResource[]): Promise<void> {
    const { port } = this;
    if (resources.includes("designs")) await this.scope(scopeOf("designs"));
    const fanned = resources.filter((r): r is "members" | "claims" => r === "members" || r === "claims");
    let groups: string[] = [];
    if (resources.includes("groups")) {
      const items: unknown[] = [];
      const fresh = await this.scope(scopeOf("groups"), undefined, (page) => items.push(...page));
      // A resumed groups walk saw only part of the list: the snapshot holds the rest.
      groups = groupNumbers(fresh ? items : await port.currentGroups());
    } else if (fanned.length) {
      const items: unknown[] = [];
      for await (const page of this.pagesOf(scopeOf("groups"), undefined)) items.push(...itemsOf(page));
      groups = groupNumbers(items);
    }
    const scopes: Scope[] = fanned.flatMap((r) => fanOutScopes(r, groups, this.opts.claimsWindow));
    const concurrency = Math.max(1, this.opts.groupConcurrency ?? 4);
    const limit = pLimit(concurrency);
    // Register every scope first: deletes are proven against the whole plan, walked or not. The
    // calls are applied in order, so they go out together instead of one round trip each.
    const begun = await Promise.all(scopes.map((s) => port.beginScope(s)));
    const states = new Map<string, ScopeState>(scopes.map((s, i) => [s.key, begun[i]!]));
    // A scope gives its slot back once its last page is fetched; the store finishes its pages
    // meanwhile (in order, before anything that follows), so the next walk is not held up by it.
    const stored: Promise<void>[] = [];
    this.known.plan(scopes.filter((s) => !states.get(s.key)!.complete), concurrency);
    const results = await Promise.allSettled(
      scopes.map((s) =>
        limit(async () => {
          if (this.signal.aborted) throw this.signal.reason;
          this.known.began(s);
          stored.push((await this.walkScope(s, states.get(s.key))).stored);
        }),
      ),
    );
    const storing = await Promise.allSettled(stored);
    const failed = [...results, ...storing].find((r): r is PromiseRejectedResult => r.status === "rejected");
    if (failed) throw failed.reason;
    if (fanned.includes("claims")) await this.verifyClaims(limit);
    await this.confirmDeletes(limit);
  }

  /**
   * Confirm each delete before finishRun makes it (see deleteConfirmations). A confirmation can
   * itself find a delete (a member read again whose list dropped another coverage meanwhile), so
   * it goes on until every candidate was confirmed once, a few rounds at most.
   */
  private async confirmDeletes(limit: ReturnType<typeof pLimit>): Promise<void> {
    const asked = { members: new Set<string>(), coverages: new Set<string>(), plans: new Set<string>() };
    for (let round = 0; round < MAX_CONFIRM_ROUNDS; round++) {
      const c = await this.port.deleteCandidates();
      const fresh = {
        members: c.members.filter((id) => !asked.members.has(id)),
        coverages: c.coverages.filter((x) => !asked.coverages.has(x.id)),
        plans: c.plans.filter((id) => !asked.plans.has(id)),
      };
      if (fresh.members.length + fresh.coverages.length + fresh.plans.length === 0) return;
      for (const id of fresh.members) asked.members.add(id);
      for (const x of fresh.coverages) asked.coverages.add(x.id);
      for (const id of fresh.plans) asked.plans.add(id);
      const idFields = { members: this.encoder?.idField("members") ?? "id", groups: this.encoder?.idField("groups") ?? "id" };
      await this.lookups(limit, deleteConfirmations(fresh, this.opts.source.memberText !== undefined, idFields));
    }
  }

  /** Walk lookup scopes (each applying only what `keep` selects), `limit` at a time; the first failure is thrown. */
  private async lookups(limit: ReturnType<typeof pLimit>, walks: readonly Lookup[]): Promise<void> {
    if (walks.length === 0) return;
    const begun = await Promise.all(walks.map((w) => this.port.beginScope(w.scope)));
    const results = await Promise.allSettled(
      walks.map((w, i) =>
        limit(async () => {
          if (this.signal.aborted) throw this.signal.reason;
          await (await this.walkScope(w.scope, begun[i], undefined, w.keep)).stored;
        }),
      ),
    );
    const failed = results.find((r): r is PromiseRejectedResult => r.status === "rejected");
    if (failed) throw failed.reason;
  }

  /** Look up, by member, the claims their window's walk did not list (see claimLookups). */
  private async verifyClaims(limit: ReturnType<typeof pLimit>): Promise<void> {
    await this.lookups(limit, claimLookups(await this.port.claimsToVerify(), this.encoder?.idField("claims") ?? "id"));
  }

  /** Pages of a scope as the store takes them (see pageInputs); `known`: those of its pages the snapshot holds whole. */
  private pagesOf(scope: Scope, startAfter: string | undefined, known: Promise<KnownPageMap> = Promise.resolve(new Map()), keep?: Keep): AsyncGenerator<PageInput & { items?: readonly unknown[] }> {
    return pageInputs(this.opts.source, scope, startAfter, { signal: this.signal, encoder: this.encoder, known, ...(keep ? { keep } : {}) });
  }

  /**
   * Walk one scope from its checkpoint and wait until the store has every page; returns whether it
   * started from the beginning.
   */
  private async scope(scope: Scope, known?: ScopeState, onItems?: (items: readonly unknown[]) => void): Promise<boolean> {
    const walked = await this.walkScope(scope, known, onItems);
    await walked.stored;
    return walked.fresh;
  }

  /** {@link fetchScope} in a span of its own (its requests' parent), ended once the store has every page. */
  private walkScope(scope: Scope, known?: ScopeState, onItems?: (items: readonly unknown[]) => void, keep?: Keep): Promise<{ fresh: boolean; stored: Promise<void> }> {
    return inSpan(SpanNames.walk, walkAttributes(scope), () => this.fetchScope(scope, known, onItems, keep), { until: (w) => w.stored });
  }

  /**
   * Fetch one scope's pages from its checkpoint, handing each to the store. Resolves when the last
   * page is fetched: `stored` settles when the store has applied them all (or one failed). A fetch
   * failure is thrown once the pages before it are applied.
   */
  private async fetchScope(scope: Scope, known?: ScopeState, onItems?: (items: readonly unknown[]) => void, keep?: Keep): Promise<{ fresh: boolean; stored: Promise<void> }> {
    const { port, opts } = this;
    const state = known ?? (await port.beginScope(scope));
    const fresh = !state.complete && state.cursor === undefined;
    if (state.complete) {
      opts.onProgress?.({ resource: scope.resource, scope: scope.key, pages: state.pages, records: state.records, done: true });
      return { fresh, stored: Promise.resolve() };
    }
    let pages = state.pages;
    let records = state.records;
    let ended = false;
    const applied: Promise<unknown>[] = [];
    // Every page handed to the store is applied (or failed) before the scope counts as walked.
    const settle = async () => {
      const results = await Promise.allSettled(applied);
      const failed = results.find((r): r is PromiseRejectedResult => r.status === "rejected");
      if (failed) throw failed.reason;
    };
    try {
      // Asked for as the scope's first request goes out, awaited when its bytes are in.
      const known = this.known.of(scope, keep);
      known.catch(() => undefined); // awaited by the first page's lookup; a failure is the store's
      for await (const page of this.pagesOf(scope, state.cursor, known, keep)) {
        // A page read is handed on even when the run is stopping: applied if the store is well,
        // or noted as read and not kept if the store has failed (see `unkeptClaims`).
        const stored = (await this.apply(scope, page)).applied;
        const at = { resource: scope.resource, scope: scope.key, pages: ++pages, records: (records += (page.raw ?? page.items ?? []).length), done: page.end };
        // Told once the store has the page: its count is the one the run's summary reports.
        const told = stored.then((seen) => opts.onProgress?.(typeof seen === "number" ? { ...at, seen } : at));
        // Settled by `settle()`, maybe pages later: until then a store failure must not count as unhandled.
        told.catch(() => undefined);
        applied.push(told);
        if (this.signal.aborted) throw this.signal.reason;
        onItems?.(itemsOf(page));
        ended = page.end;
      }
      if (!ended) {
        // An empty list (or a resumed walk whose last page was the end) closes with an empty page.
        applied.push((await this.apply(scope, { items: [], next: undefined, end: true })).applied);
        opts.onProgress?.({ resource: scope.resource, scope: scope.key, pages, records, done: true });
      }
    } catch (e) {
      await settle(); // a store failure, if any, is the cause to report
      throw e;
    }
    setActiveAttributes({ [Attr.pages]: pages, [Attr.records]: records });
    const stored = settle();
    // Awaited by the caller after the other walks; until then a failure must not count as unhandled.
    stored.catch(() => undefined);
    return { fresh, stored };
  }

  /**
   * Hand a page to the store once there is room among the pages in flight (across all walks): the
   * walk waits here, so a store that lags holds the fetching back instead of letting pages pile up
   * in memory. `applied` settles when the store has applied the page.
   */
  private async apply(scope: Scope, page: PageInput): Promise<{ applied: Promise<number | void> }> {
    while (this.inFlight >= MAX_PAGES_IN_FLIGHT) await new Promise<void>((r) => this.waiters.push(r));
    // A load from empty parses and encodes every record. That work goes where there is room: here
    // while the store has pages enough waiting, to the store (ids and texts only) when it is
    // about to run dry. Either side alone left the other waiting.
    const encodeAll = this.empty.has(scope.resource) && this.inFlight > STORE_BUSY_PAGES;
    this.inFlight++;
    let sent: Promise<number | void>;
    try {
      sent = this.port.applyPage(scope, this.encoder ? encodePage(this.encoder, scope, page, encodeAll) : page);
    } catch (e) {
      sent = Promise.reject(e instanceof Error ? e : new Error(String(e)));
    }
    const applied = sent.finally(() => {
      this.inFlight--;
      this.waiters.shift()?.();
    });
    // A page the store could not apply ends the whole walk at once: its scope must not go on to a
    // later page (whose checkpoint would move the cursor past it), and the run can only fail.
    applied.catch((e: unknown) => {
      if (!this.signal.aborted) this.abort.abort(e);
    });
    return { applied };
  }
}


function describe(e: unknown): { code: string; message: string } {
  if (e instanceof Error) return { code: (e as Partial<BenefitsSyncError>).code ?? e.name, message: e.message };
  return { code: "ERROR", message: String(e) };
}

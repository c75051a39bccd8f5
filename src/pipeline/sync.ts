import pLimit from "p-limit";
import type { BenefitsSyncError } from "../errors.js";
import type { ResourceCounts } from "../store/counts.js";
import { WalkedResources, type StoredResource, type WalkedResource } from "../store/resources.js";
import { scopeOf, type Scope } from "../store/scopes.js";
import { SnapshotStore, defaultDeletePolicy, type DeletePolicy, type ScopeState } from "../store/snapshot.js";
import { inProcessPort, itemsOf, type PageInput, type RunStart, type SnapshotPort } from "../store/snapshot-port.js";
import { Encoder } from "../store/prepare-page.js";
import { topLevelString } from "../api/raw-items.js";
import type { PageSource } from "../extract/page-source.js";
import { confirmScope, fanOutScopes, groupNumbers, memberClaimsScope, memberLookupScope, requestFilters, type ClaimsWindow } from "../extract/scopes.js";

export interface SyncProgress {
  readonly resource: WalkedResource;
  readonly scope: string;
  readonly pages: number;
  readonly records: number;
  readonly done: boolean;
}

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
  readonly durationMs: number;
}

export interface StartedRunReport {
  readonly runId: number;
  readonly status: "succeeded" | "failed";
  readonly dryRun: boolean;
  readonly resumedFrom?: number;
  readonly resources: Partial<Record<StoredResource, ResourceCounts>>;
  readonly error?: { readonly code: string; readonly message: string };
  readonly durationMs: number;
}

/**
 * Pages walked but not yet applied, across all walks: bounds memory when the store lags (a page of
 * 100 members is a few hundred KB once prepared).
 */
const MAX_PAGES_IN_FLIGHT = 48;

/** Deletes are confirmed one lookup per member up to this many (more: the guard judges them). */
const MAX_MEMBER_LOOKUPS = 500;
/** ...and by reading again up to this many groups' member listings. */
const MAX_CONFIRM_LISTINGS = 50;

/** Which items of a page a lookup applies. */
type Keep = (item: Record<string, unknown>) => boolean;

/** Items whose child list (`coverages`, `plans`) names one of `ids`. */
function listsAnyOf(field: string, ids: ReadonlySet<string>): Keep {
  return (item) => Array.isArray(item[field]) && (item[field] as unknown[]).some((c) => c !== null && typeof c === "object" && ids.has((c as { id?: string }).id ?? ""));
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
    // No run was started (another holds the snapshot, or the file cannot be written): say why.
    const error = describe(e);
    const busy = error.code === "SNAPSHOT_BUSY" || error.code === "SQLITE_BUSY";
    return { runId: null, status: busy ? "busy" : "failed", dryRun: opts.dryRun ?? false, resources: {}, error, durationMs: Date.now() - started };
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
  /** Pages the snapshot holds whole, by `scope|cursor`: recognised by their text, not re-read. */
  private readonly knownPages: Map<string, { fp: number; next: string | undefined }>;

  private readonly signal: AbortSignal;

  constructor(
    private readonly opts: SyncOptions,
    private readonly port: SnapshotPort,
    private readonly abort: AbortController,
    run: RunStart,
  ) {
    this.signal = abort.signal;
    this.encoder = port.encoding ? new Encoder(port.encoding) : undefined;
    this.empty = new Set(run.empty);
    // Only a snapshot on its own thread shares the fingerprint key with this one.
    this.knownPages = new Map(this.encoder ? run.pages.map(([scope, cursor, fp, next]) => [`${scope}|${cursor}`, { fp, next: next ?? undefined }]) : []);
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
    const limit = pLimit(Math.max(1, this.opts.groupConcurrency ?? 4));
    // Register every scope first: deletes are proven against the whole plan, walked or not. The
    // calls are applied in order, so they go out together instead of one round trip each.
    const begun = await Promise.all(scopes.map((s) => port.beginScope(s)));
    const states = new Map<string, ScopeState>(scopes.map((s, i) => [s.key, begun[i]!]));
    // A scope gives its slot back once its last page is fetched; the store finishes its pages
    // meanwhile (in order, before anything that follows), so the next walk is not held up by it.
    const stored: Promise<void>[] = [];
    const results = await Promise.allSettled(
      scopes.map((s) =>
        limit(async () => {
          if (this.signal.aborted) throw this.signal.reason;
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
   * Before anything is deleted, each delete is confirmed: a record that moved during the walk
   * from a part not yet read to one already read (a member to another group, a coverage to
   * another member, a plan to another group) was listed by no page, yet is alive. A member is
   * looked up by id (404 proves it gone); a coverage or plan is looked for in the listings that
   * could hold it, read again. What is found is applied (it is then seen, and not deleted). Past
   * a bound the lookups are skipped: the delete guard judges so many deletes anyway.
   */
  private async confirmDeletes(limit: ReturnType<typeof pLimit>): Promise<void> {
    const c = await this.port.deleteCandidates();
    const walks: { scope: Scope; keep: Keep }[] = [];
    if (this.opts.source.memberText && c.members.length <= MAX_MEMBER_LOOKUPS) {
      for (const id of c.members) walks.push({ scope: memberLookupScope(id), keep: () => true });
    }
    const coveragesByGroup = new Map<string, Set<string>>();
    for (const cov of c.coverages) if (cov.groupId !== null) coveragesByGroup.set(cov.groupId, (coveragesByGroup.get(cov.groupId) ?? new Set()).add(cov.id));
    if (coveragesByGroup.size <= MAX_CONFIRM_LISTINGS) {
      for (const [groupId, ids] of coveragesByGroup) walks.push({ scope: confirmScope("members", groupId), keep: listsAnyOf("coverages", ids) });
    }
    if (c.plans.length > 0) walks.push({ scope: confirmScope("groups"), keep: listsAnyOf("plans", new Set(c.plans)) });
    await this.lookups(limit, walks);
  }

  /** Walk lookup scopes (each applying only what `keep` selects), `limit` at a time; the first failure is thrown. */
  private async lookups(limit: ReturnType<typeof pLimit>, walks: readonly { scope: Scope; keep: Keep }[]): Promise<void> {
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

  /**
   * Claims that their window's walk did not list, although their stored service date is inside
   * it, are looked up by member before anything is deleted: a claim whose date moved out of the
   * window is still there (and is updated), only one its member's walk does not list is gone.
   */
  private async verifyClaims(limit: ReturnType<typeof pLimit>): Promise<void> {
    const lookups = (await this.port.claimsToVerify()).filter((v): v is { memberId: string; ids: string[] } => v.memberId !== null);
    const idField = this.encoder?.idField("claims") ?? "id";
    await this.lookups(
      limit,
      lookups.map((v) => {
        const ids = new Set(v.ids);
        return { scope: memberClaimsScope(v.memberId), keep: (item: Record<string, unknown>) => ids.has(item[idField] as string) };
      }),
    );
  }


  /** Pages of a scope: the items' text when the source can give it (the store parses it on its own thread). */
  private pagesOf(scope: Scope, startAfter: string | undefined, keep?: Keep): AsyncGenerator<PageInput & { items?: readonly unknown[] }> {
    const { source } = this.opts;
    const pageOpts = { signal: this.signal, ...(startAfter !== undefined ? { startAfter } : {}) };
    const filters = requestFilters(scope);
    const lookupId = scope.filters.id;
    if (lookupId !== undefined && source.memberText) {
      // One member by id: a page of one record, or of none when the service answers 404.
      const lookup = source.memberText.bind(source);
      const signal = this.signal;
      return (async function* () {
        const text = await lookup(lookupId, { signal });
        yield { raw: text === undefined ? [] : [text], next: undefined, end: true };
      })();
    }
    if (keep) {
      // A lookup, not a walk to store: only the records asked about are applied.
      const pages = source.pages(scope.resource, filters, pageOpts);
      return (async function* () {
        for await (const p of pages) {
          const items = p.items.filter((i) => i !== null && typeof i === "object" && keep(i as Record<string, unknown>));
          yield { items, next: p.next, end: p.next === undefined };
        }
      })();
    }
    if (source.rawPages) {
      const known = this.knownPages;
      const fingerprints = this.encoder;
      const pages = source.rawPages(scope.resource, filters, {
        ...pageOpts,
        // The groups walk must see every group (the fan-out is built from it): always read it.
        ...(fingerprints && scope.resource !== "groups"
          ? {
              known: {
                fingerprint: (bytes: Uint8Array) => fingerprints.pageFingerprint(bytes),
                lookup: (after: string | undefined, fp: number) => {
                  const k = known.get(`${scope.key}|${after ?? ""}`);
                  return k && k.fp === fp ? { next: k.next } : undefined;
                },
              },
            }
          : {}),
      });
      return (async function* () {
        for await (const p of pages) {
          yield {
            raw: p.items,
            next: p.next,
            end: p.next === undefined,
            ...(p.fp !== undefined ? { pageFp: { startAfter: p.startAfter, fp: p.fp } } : {}),
            ...(p.known ? { known: true } : {}),
          };
        }
      })();
    }
    const pages = source.pages(scope.resource, filters, pageOpts);
    return (async function* () {
      for await (const p of pages) yield { items: p.items, raw: p.raw, next: p.next, end: p.next === undefined };
    })();
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

  /**
   * Fetch one scope's pages from its checkpoint, handing each to the store. Resolves when the last
   * page is fetched: `stored` settles when the store has applied them all (or one failed). A fetch
   * failure is thrown once the pages before it are applied.
   */
  private async walkScope(
    scope: Scope,
    known?: ScopeState,
    onItems?: (items: readonly unknown[]) => void,
    keep?: Keep,
  ): Promise<{ fresh: boolean; stored: Promise<void> }> {
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
    const applied: Promise<void>[] = [];
    // Every page handed to the store is applied (or failed) before the scope counts as walked.
    const settle = async () => {
      const results = await Promise.allSettled(applied);
      const failed = results.find((r): r is PromiseRejectedResult => r.status === "rejected");
      if (failed) throw failed.reason;
    };
    try {
      for await (const page of this.pagesOf(scope, state.cursor, keep)) {
        if (this.signal.aborted) throw this.signal.reason;
        applied.push((await this.apply(scope, page)).applied);
        onItems?.(itemsOf(page));
        pages++;
        records += (page.raw ?? page.items ?? []).length;
        ended = page.end;
        opts.onProgress?.({ resource: scope.resource, scope: scope.key, pages, records, done: page.end });
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
    const stored = settle();
    // Awaited by the caller after the other walks; until then a failure must not count as unhandled.
    stored.catch(() => undefined);
    return { fresh, stored };
  }

  /**
   * The share of a page's work done on this thread. A resource that was empty when the run began
   * is all inserts: parse and encode everything here. Otherwise only ids and texts go across; the
   * store fingerprints them and parses only the records that changed.
   */
  private prepare(encoder: Encoder, scope: Scope, page: PageInput): PageInput {
    if (page.known) return page;
    const meta = { next: page.next, end: page.end, ...(page.pageFp ? { pageFp: page.pageFp } : {}) };
    if (!page.raw || this.empty.has(scope.resource)) {
      return { prepared: encoder.prepare(scope.resource, itemsOf(page), page.raw, this.empty.has(scope.resource)), ...meta };
    }
    const idField = encoder.idField(scope.resource);
    const ids: string[] = [];
    const raw: string[] = [];
    const odd: unknown[] = [];
    for (const text of page.raw) {
      const id = text.charCodeAt(0) === 0x7b ? topLevelString(text, idField) : undefined;
      if (id) {
        ids.push(id);
        raw.push(text);
      } else odd.push(itemsOf({ raw: [text], next: undefined, end: false })[0]);
    }
    // Items without a usable id are quarantined: the full check runs on them alone.
    const problems = odd.length ? encoder.prepare(scope.resource, odd, undefined, false).problems : [];
    return { lazy: { ids, raw, problems }, ...meta };
  }

  /**
   * Hand a page to the store once there is room among the pages in flight (across all walks): the
   * walk waits here, so a store that lags holds the fetching back instead of letting pages pile up
   * in memory. `applied` settles when the store has applied the page.
   */
  private async apply(scope: Scope, page: PageInput): Promise<{ applied: Promise<void> }> {
    while (this.inFlight >= MAX_PAGES_IN_FLIGHT) await new Promise<void>((r) => this.waiters.push(r));
    this.inFlight++;
    let sent: Promise<void>;
    try {
      sent = this.port.applyPage(scope, this.encoder ? this.prepare(this.encoder, scope, page) : page);
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

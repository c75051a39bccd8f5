/**
 * The webhook worker: drains the inbox into the snapshot, a batch of members per run.
 *
 * It is a second writer of the snapshot, so it never writes beside a sync: each batch is a run of
 * its own (job `webhooks`, recorded in `runs` like any other, so a change's run tells its source),
 * started with the same lease as a sync's. While a sync holds the snapshot the batch does not
 * start and every event stays pending for the next drain. Members are refetched before the lease
 * is taken (a rate-limited service must not keep a nightly sync out), and applied only if no run
 * held the snapshot or began while they were fetched, so what is applied is never older than
 * what a sync wrote before it (see applyBatch).
 *
 * Each member is looked up by id and applied through the sync's own path (a lookup scope, the
 * same page applier, diff, history and change records). A lookup proves nothing about a listing,
 * so a 404 deletes nothing: the next full walk decides, under the sync's proof rules. The events
 * are marked applied only once the run that applied them has committed; an event whose refetch
 * failed is retried with backoff, and parked with its reason after the last attempt.
 */
import pLimit from "p-limit";
import { SnapshotStore, defaultDeletePolicy, type DeletePolicy } from "../store/snapshot.js";
import { inProcessPort, type PageInput, type SnapshotPort } from "../store/snapshot-port.js";
import { WEBHOOK_JOB } from "../store/runs/run-log.js";
import { Encoder } from "../store/walk/prepare-page.js";
import { memberLookupScope } from "../extract/scopes.js";
import type { PageSource } from "../extract/page-source.js";
import { retryDelay } from "../api/retry.js";
import { redact } from "../errors.js";
import type { DueMember, Inbox } from "./inbox.js";
import { Attr, inSpan, markFailed, SpanNames } from "../telemetry/spans.js";

/** The inbox as the worker uses it: on this thread, or on the inbox's own thread (each call a promise). */
export type DrainInbox = { [K in "due" | "applied" | "failed" | "park" | "prune"]: (...args: Parameters<Inbox[K]>) => ReturnType<Inbox[K]> | Promise<ReturnType<Inbox[K]>> };

/** The job name of the worker's runs, as `runs` shows it (a sync resumes a failed walk across them). */
export { WEBHOOK_JOB };

/** The worker's settings: the `webhooks` block of the configuration. */
export interface ApplySettings {
  /** Members refetched per run. */
  readonly batchSize: number;
  /** Refetches of one event before it is parked. */
  readonly maxAttempts: number;
  /** Backoff after a failed refetch: doubles per attempt from `retryBaseMs`, at most `retryCapMs`. */
  readonly retryBaseMs: number;
  readonly retryCapMs: number;
  /** Finished events are forgotten after this many days. */
  readonly retentionDays: number;
}

export const DEFAULT_APPLY_SETTINGS: ApplySettings = { batchSize: 100, maxAttempts: 8, retryBaseMs: 5_000, retryCapMs: 600_000, retentionDays: 30 };

export interface DrainOptions {
  readonly inbox: DrainInbox;
  /** The service: only its lookup of one member by id is used. */
  readonly source: Required<Pick<PageSource, "memberText">>;
  /** The snapshot: a store on this thread, or a port to one on its own thread. */
  readonly store: SnapshotStore | SnapshotPort;
  readonly settings?: Partial<ApplySettings>;
  readonly deletePolicy?: Partial<DeletePolicy>;
  /** Refetches in flight at once. */
  readonly concurrency?: number;
  readonly now?: () => Date;
  /** Uniform numbers in [0, 1) for the backoff's jitter. */
  readonly random?: () => number;
  readonly signal?: AbortSignal;
  /** Told, for each member applied, the seconds since the oldest of its events was received (`/metrics`' apply lag). */
  readonly onApplied?: (lagSeconds: number) => void;
}

/** What one drain did. */
export interface DrainReport {
  /** The runs it recorded, in order. */
  readonly runs: { readonly runId: number; readonly status: "succeeded" | "failed"; readonly members: number }[];
  /** Events applied (their member refetched and applied, or answered 404). */
  readonly applied: number;
  /** Members the service answered 404 for: kept until a full walk proves them gone. */
  readonly notFound: number;
  /** Events whose refetch failed and that wait for a retry. */
  readonly retrying: number;
  /** Events given up on, with their reason (see `webhooks status`). */
  readonly parked: number;
  /** Another run held the snapshot: the events due stay pending for the next drain. */
  readonly busy?: { readonly code: string; readonly message: string };
  /** The snapshot failed (a run could not be applied): the events stay pending. */
  readonly error?: { readonly code: string; readonly message: string };
  /** Finished events forgotten after `retentionDays`. */
  readonly pruned: number;
}

/** One member's refetch within a batch. */
type Fetched =
  /** `unreadable`: what the snapshot could not store of the answer (quarantined, as a sync does). */
  | { readonly kind: "page"; readonly member: DueMember; readonly page: PageInput; readonly found: boolean; readonly unreadable?: string }
  | { readonly kind: "failed"; readonly member: DueMember; readonly reason: string };

/**
 * Drain what is due now: batch after batch, each a run, until nothing is due, another run holds
 * the snapshot, the snapshot fails, or `signal` aborts. Then prune what is older than the
 * retention. Never throws for a refetch or a busy snapshot: the report says so.
 *
 * @example const report = await drainInbox({ inbox, source: client, store });
 */
export async function drainInbox(opts: DrainOptions): Promise<DrainReport> {
  const settings = { ...DEFAULT_APPLY_SETTINGS, ...opts.settings };
  const now = opts.now ?? (() => new Date());
  const port = opts.store instanceof SnapshotStore ? inProcessPort(opts.store) : opts.store;
  const total = { runs: [] as DrainReport["runs"][number][], applied: 0, notFound: 0, retrying: 0, parked: 0, pruned: 0 };
  let stop: Pick<DrainReport, "busy" | "error"> = {};
  // A member refetched in this drain and due again (a new event meanwhile) waits for the next one,
  // so a member that changes all the time cannot keep the drain going forever.
  const done = new Set<string>();
  while (!opts.signal?.aborted) {
    const due = (await opts.inbox.due(now().toISOString(), settings.batchSize + done.size)).filter((m) => !done.has(m.memberId)).slice(0, settings.batchSize);
    if (due.length === 0) break;
    for (const m of due) done.add(m.memberId);
    // A span per batch (one run): the refetches are its children; no member's id is on any of them.
    const batch = await inSpan(SpanNames.apply, { [Attr.members]: due.length }, async (span) => {
      const b = await applyBatch(opts, port, settings, now, due);
      span.setAttributes({ [Attr.applied]: b.applied, [Attr.retrying]: b.retrying, [Attr.parked]: b.parked, [Attr.runStatus]: b.busy ? "busy" : (b.run?.status ?? "failed") });
      if (b.run) span.setAttribute(Attr.runId, b.run.runId);
      if (b.error) markFailed(span, b.error.code);
      return b;
    });
    if (batch.run) total.runs.push(batch.run);
    total.applied += batch.applied;
    total.notFound += batch.notFound;
    total.retrying += batch.retrying;
    total.parked += batch.parked;
    if (batch.busy || batch.error) {
      stop = batch.busy ? { busy: batch.busy } : { error: batch.error! };
      break;
    }
  }
  total.pruned = await opts.inbox.prune(new Date(now().getTime() - settings.retentionDays * 86_400_000).toISOString());
  return { ...total, ...stop };
}

interface BatchOutcome {
  run?: DrainReport["runs"][number];
  applied: number;
  notFound: number;
  retrying: number;
  parked: number;
  busy?: { code: string; message: string };
  error?: { code: string; message: string };
}

/**
 * One run: refetch the members outside the lease, then claim the snapshot, apply them, end the
 * run, and mark the events. A rate-limited or slow service never holds the snapshot: a nightly
 * sync that starts meanwhile gets it. What was fetched is applied only when no run held the
 * snapshot as the refetch began ({@link SnapshotPort.runMark}) and this run is the next one after
 * it: then no sync began while the worker fetched, so nothing applied is older than what a sync
 * wrote. Otherwise the fetched answers are dropped and the events stay pending.
 */
async function applyBatch(opts: DrainOptions, port: SnapshotPort, settings: ApplySettings, now: () => Date, due: readonly DueMember[]): Promise<BatchOutcome> {
  const out: BatchOutcome = { applied: 0, notFound: 0, retrying: 0, parked: 0 };
  const refused = (e: unknown): BatchOutcome => {
    const why = describe(e);
    return why.code === "SNAPSHOT_BUSY" ? { ...out, busy: why } : { ...out, error: why };
  };
  let mark: number;
  try {
    mark = await port.runMark();
  } catch (e) {
    return refused(e);
  }
  const encoder = port.encoding ? new Encoder(port.encoding) : undefined;
  let fetched: Fetched[];
  try {
    const limit = pLimit(Math.max(1, opts.concurrency ?? 4));
    fetched = await Promise.all(due.map((m) => limit(() => refetch(opts, encoder, m))));
  } catch (e) {
    // Stopped (the signal) while fetching: no run was started, the events stay pending.
    return { ...out, error: describe(e) };
  }
  let runId: number;
  try {
    // Not resumed: a lookup run has no walk to resume, and a failed sync's options are not its own.
    runId = (await port.startRun(WEBHOOK_JOB, { webhooks: true }, { resume: false })).runId;
  } catch (e) {
    return refused(e);
  }
  if (runId !== mark + 1) {
    // Another run began while the worker fetched: its walk may have read these members later.
    const outcome = await port.finishRun({ ...defaultDeletePolicy, ...opts.deletePolicy }).catch((e: unknown) => ({ status: "failed" as const, failure: describe(e) }));
    return {
      ...out,
      run: { runId, status: outcome.status, members: 0 },
      busy: { code: "SNAPSHOT_BUSY", message: `run ${mark + 1} began while the worker refetched these members (its walk may have read them later): nothing was applied, the events stay pending` },
    };
  }
  const heartbeat = setInterval(() => port.heartbeat(), 1000);
  heartbeat.unref();
  let failure: { code: string; message: string } | undefined;
  try {
    for (const f of fetched) {
      if (f.kind !== "page") continue;
      const scope = memberLookupScope(f.member.memberId);
      await port.beginScope(scope);
      await port.applyPage(scope, f.page);
    }
  } catch (e) {
    failure = describe(e);
  } finally {
    clearInterval(heartbeat);
  }
  let outcome;
  try {
    outcome = await port.finishRun({ ...defaultDeletePolicy, ...opts.deletePolicy }, failure);
  } catch (e) {
    return { ...out, error: describe(e) };
  }
  const applied = fetched.filter((f): f is Extract<Fetched, { kind: "page" }> => f.kind === "page");
  out.run = { runId, status: outcome.status, members: applied.length };
  const at = now().toISOString();
  if (outcome.status === "succeeded") {
    for (const f of applied) {
      // An answer the snapshot could not store whole is not retried (it would read the same): parked.
      if (f.unreadable !== undefined) {
        await opts.inbox.park(f.member.eventIds, f.unreadable, at);
        out.parked += f.member.eventIds.length;
      } else {
        await opts.inbox.applied(f.member.eventIds, runId, at);
        out.applied += f.member.eventIds.length;
        opts.onApplied?.(Math.max(0, Date.parse(at) - Date.parse(f.member.firstReceivedAt)) / 1000);
      }
    }
    out.notFound = applied.filter((f) => !f.found).length;
  } else out.error = outcome.failure ?? failure ?? { code: "ERROR", message: `run ${runId} failed` };
  for (const f of fetched) {
    if (f.kind === "failed") {
      const last = f.member.attempts + 1 >= settings.maxAttempts;
      const delay = Math.max(settings.retryBaseMs, retryDelay(f.member.attempts, { baseMs: settings.retryBaseMs, capMs: settings.retryCapMs }, opts.random));
      await opts.inbox.failed(f.member.eventIds, f.reason, at, new Date(now().getTime() + delay).toISOString(), settings.maxAttempts);
      if (last) out.parked += f.member.eventIds.length;
      else out.retrying += f.member.eventIds.length;
    }
  }
  return out;
}

/**
 * Refetch one member as a page of its lookup scope (one record, or none for a 404), encoded as
 * the sync encodes it. What the snapshot will quarantine is told apart: its events are parked.
 */
async function refetch(opts: DrainOptions, encoder: Encoder | undefined, member: DueMember): Promise<Fetched> {
  let text: string | undefined;
  try {
    text = await opts.source.memberText(member.memberId, opts.signal ? { signal: opts.signal } : {});
  } catch (e) {
    if (opts.signal?.aborted) throw e;
    const why = describe(e);
    return { kind: "failed", member, reason: `${why.code}: ${why.message}` };
  }
  const raw = text === undefined ? [] : [text];
  if (!encoder) return { kind: "page", member, page: { raw, next: undefined, end: true }, found: text !== undefined };
  const items = raw.map((t) => parseOrNull(t));
  const prepared = encoder.prepare("members", items, raw, true);
  const problem = prepared.problems[0];
  const page: PageInput = { prepared, next: undefined, end: true };
  if (!problem) return { kind: "page", member, page, found: text !== undefined };
  return { kind: "page", member, page, found: text !== undefined, unreadable: redact(`the service's answer for this member could not be stored whole (quarantined): ${problem.reason}`) };
}

function parseOrNull(text: string): unknown {
  try {
    return JSON.parse(text) as unknown;
  } catch {
    return null;
  }
}

/** An error's code and redacted message, as the run log records them. */
function describe(e: unknown): { code: string; message: string } {
  if (e instanceof Error) return { code: (e as { code?: unknown }).code?.toString() ?? e.name, message: redact(e.message) };
  return { code: "ERROR", message: redact(String(e)) };
}

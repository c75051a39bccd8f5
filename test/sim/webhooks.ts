/**
 * Webhook events among the simulation's faults: the service's own sender (src/sandbox/webhooks.ts)
 * posts a `member_update` for each member the model changed to a real receiver over loopback
 * (createReceiver, a real inbox file beside the snapshot), and the worker (drainInbox) applies them
 * on its own connection to the snapshot, as `webhooks apply` does in another process.
 *
 * Faults, from the seed's own streams (so a seed's schedule is unchanged): a batch whose receiver
 * is down (the sender gives up: lost), duplicated, reordered (sent in reverse, or shuffled), a
 * drain between two operations of a day (the member refetched in a state a later operation
 * changes or reverts), events sent and drained while a full walk holds the snapshot (at the n-th
 * page: the worker must wait and lose nothing), HTTP faults on the refetches, and an applied
 * event sent again later (a manual retry: no second effect).
 *
 * What each drain must show is checked here (see {@link WebhookWorld.drain}); the safety net
 * (after the quiet final sync the snapshot equals the service, whatever was lost) is the
 * simulation's `final-state`.
 */
import BetterSqlite3 from "better-sqlite3";
import type { ServiceClient } from "../../src/api/client.js";
import { Rng as SandboxRng } from "../../src/sandbox/prng.js";
import { WebhookSender } from "../../src/sandbox/webhooks.js";
import { openDatabase } from "../../src/store/file/database.js";
import { resolveSnapshotPiiKey } from "../../src/store/pii/pii-key-identity.js";
import { SnapshotStore } from "../../src/store/snapshot.js";
import { inProcessPort } from "../../src/store/snapshot-port.js";
import { drainInbox, WEBHOOK_JOB } from "../../src/webhooks/apply.js";
import { ReceiverCounters } from "../../src/webhooks/counters.js";
import { Inbox, inboxPathFor } from "../../src/webhooks/inbox.js";
import { createReceiver, type Receiver } from "../../src/webhooks/server.js";
import { SignatureVerifier } from "../../src/webhooks/verify.js";
import { diffStates, recordedChanges, snapshotState } from "../helpers/expected.js";
import { expectedState } from "./expected.js";
import { RekeysBesideWorker, staleKeyRuns } from "./rekeys.js";
import type { Violation } from "./invariants.js";
import type { ServiceModel } from "./model.js";
import { Rng } from "./rng.js";
import type { SimServer } from "./server.js";
import { LEASE_MS, SIM_PII_KEY, type World } from "./world.js";

/** The secret the sender signs with and the receiver verifies (never printed: the SSN check does not look for it, nothing logs it). */
const SECRET = "sim-webhook-secret-4c1d8e0f9a7b6c5d";

/** One inbox row, as the checks compare them. */
interface InboxRow {
  id: string;
  memberId: string | null;
  state: string;
  runId: number | null;
}

export interface WebhookDeps {
  readonly seed: number;
  readonly world: World;
  readonly server: SimServer;
  readonly model: ServiceModel;
  readonly client: ServiceClient;
  /** The sync prepares pages on the caller's side (so does the worker then). */
  readonly encodeOnCaller: boolean;
  /** The worker's delete policy (the sync's). */
  readonly policy: { readonly maxDeleteShare: number; readonly maxDeleteCount: number };
  /** The schedule's trace and counts, which this adds to. */
  readonly trace: string[];
  readonly stats: Record<string, number>;
}

/** Whether a schedule has webhook events: 40% of them, from the seed's stream 5 (the schedule itself is unchanged). */
export function drawWebhooks(seed: number): boolean {
  return Rng.derive(seed, 5).chance(0.4);
}

export class WebhookWorld {
  readonly violations: Violation[] = [];
  private readonly trace: string[];
  readonly inboxPath: string;
  private readonly inbox: Inbox;
  private receiver!: Receiver;
  private port = 0;
  private readonly counters = new ReceiverCounters(1);
  /** Each member as last sent (an event goes out for every member that differs: changed, new, deleted). */
  private readonly lastSent = new Map<string, string>();
  /** The sender that sent each event (a manual retry goes through it). */
  private readonly senderOf = new Map<string, WebhookSender>();
  private readonly rng: Rng;
  /** Re-keyings during the worker's refetches (rekeys.ts, a stream of their own). */
  private readonly rekeys: RekeysBesideWorker;
  private batches = 0;
  private drains = 0;
  /** The worker refuses a snapshot no sync has made yet (`webhooks apply`): no drain before the first run. */
  private snapshotMade = false;

  private constructor(private readonly d: WebhookDeps) {
    this.rng = Rng.derive(d.seed, 6);
    this.rekeys = new RekeysBesideWorker(d.seed, d.world.path, d.stats);
    this.trace = d.trace;
    this.inboxPath = inboxPathFor(d.world.path);
    this.inbox = Inbox.open(this.inboxPath);
    for (const m of d.model.members.values()) this.lastSent.set(m.id, JSON.stringify(m));
  }

  static async start(d: WebhookDeps): Promise<WebhookWorld> {
    const w = new WebhookWorld(d);
    await w.listen();
    return w;
  }

  private bump(k: string, n = 1): void {
    this.d.stats[k] = (this.d.stats[k] ?? 0) + n;
  }

  /** Listen again on the same port (the sender's configurations name it), after being down. */
  private async listen(): Promise<void> {
    this.receiver = createReceiver({
      path: "/webhooks",
      maxBodyBytes: 65_536,
      verifier: new SignatureVerifier([SECRET]),
      auth: null,
      inbox: this.inbox,
      counters: this.counters,
      // Received at the simulated time: the worker takes members oldest first, ties by id, on every replay.
      now: this.d.world.clock.now,
    });
    this.port = (await this.receiver.listen(this.port, "127.0.0.1")).port;
  }

  get url(): string {
    return `http://127.0.0.1:${this.port}/webhooks`;
  }

  /** A sync run has started: from now on the snapshot file is one the worker may open. */
  syncStarted(): void {
    this.snapshotMade = true;
  }

  /** A coin from this schedule's webhook stream. */
  chance(p: number): boolean {
    return this.rng.chance(p);
  }

  between(lo: number, hi: number): number {
    return this.rng.between(lo, hi);
  }

  /**
   * The service sends one `member_update` for each member that changed since the last batch (new
   * and deleted ones too), with this batch's faults. Every event the receiver answered 2xx must be
   * in the inbox.
   */
  async send(where: string): Promise<void> {
    const ids: string[] = [];
    for (const [id, m] of this.d.model.members) if (this.lastSent.get(id) !== JSON.stringify(m)) ids.push(id);
    for (const id of this.lastSent.keys()) if (!this.d.model.members.has(id)) ids.push(id);
    ids.sort();
    for (const id of ids) {
      const m = this.d.model.members.get(id);
      if (m) this.lastSent.set(id, JSON.stringify(m));
      else this.lastSent.delete(id);
    }
    if (ids.length === 0) return;
    const n = ++this.batches;
    const down = this.rng.chance(0.15);
    const duplicate = this.rng.chance(0.3);
    const outOfOrder = this.rng.chance(0.3);
    const shuffled = this.rng.chance(0.3);
    if (shuffled) for (let i = ids.length - 1; i > 0; i--) {
      const j = this.rng.int(i + 1);
      [ids[i], ids[j]] = [ids[j]!, ids[i]!];
    }
    const sender = new WebhookSender(new SandboxRng(this.d.seed * 131 + n), 0);
    sender.addConfig({ url: this.url, auth: { type: "bearer", token: "sim-hook-token" }, secret: SECRET, maxAttempts: 3, delayMs: 0, duplicate, outOfOrder });
    if (down) await this.receiver.stop(100);
    const events = sender.emit(ids);
    await sender.idle();
    if (down) await this.listen();
    for (const e of events) this.senderOf.set(e.id, sender);
    const ok = new Set(sender.deliveries().filter((x) => x.state === "successful").map((x) => x.eventId));
    this.bump("webhook events sent", events.length);
    this.bump("webhook events lost (receiver down)", events.length - ok.size);
    if (duplicate) this.bump("webhook events duplicated", events.length);
    if (outOfOrder || shuffled) this.bump("webhook batches reordered");
    this.trace.push(
      `  (webhooks) batch ${n} ${where}: ${events.length} event(s) [${ids.map((x) => x.slice(0, 8)).join(" ")}]` +
        `${down ? " RECEIVER DOWN: lost" : ""}${duplicate ? " duplicated" : ""}${outOfOrder ? " reversed" : ""}${shuffled ? " shuffled" : ""}`,
    );
    const stored = new Set(this.rows().map((r) => r.id));
    const missing = [...ok].filter((id) => !stored.has(id));
    if (missing.length) this.violations.push({ kind: "webhook-lost-accepted", message: `batch ${n} (${where}): ${missing.length} event(s) answered 2xx are not in the inbox` });
  }

  /**
   * The worker drains the inbox once, on its own connection to the snapshot.
   *
   * `duringWalk`: a sync holds the snapshot; the worker must wait (busy), apply nothing, and keep
   * every event as it was. Otherwise, after it: every member whose event it applied equals the
   * service now (nothing changes the model during a drain: its refetch saw this state); the runs
   * it recorded are `webhooks` runs whose changes are exactly what changed in the snapshot (a
   * member refetched unchanged records nothing: a duplicate has no second effect), and it deleted
   * nothing the service has. Then, sometimes, an applied event is sent again (a manual retry):
   * the inbox must not take it up again.
   */
  async drain(where: string, opts: { duringWalk: boolean; level: 0 | 1 | 2 }): Promise<void> {
    if (!this.snapshotMade) return;
    const n = ++this.drains;
    const before = this.rows();
    // Only with something due does the worker claim the snapshot (and learn that a sync holds it).
    const due = this.inbox.due(this.d.world.clock.now().toISOString(), 1).length > 0;
    const stateBefore = opts.duringWalk ? undefined : snapshotState(this.d.world.db);
    // Outside a walk the server answers only within a run of its own: this drain's, with its HTTP faults.
    if (!opts.duringWalk) this.d.server.beginRun({ level: opts.level, midWalk: [], cursorBug: false }, Rng.derive(this.d.seed, 7000 + n));
    const db = openDatabase(this.d.world.path);
    db.pragma("busy_timeout = 5");
    const store = new SnapshotStore(db, { piiKey: SIM_PII_KEY, now: this.d.world.clock.now, commitEveryPages: 32, commitEveryMs: 1e9, leaseMs: LEASE_MS });
    const base = inProcessPort(store);
    const port = this.d.encodeOnCaller ? { ...base, encoding: store.encoder.options } : base;
    const random = Rng.derive(this.d.seed, 8000 + n);
    // Sometimes the snapshot is re-keyed while the worker's first refetch waits for its answer: in a
    // drain without HTTP faults, so that no refetch failure goes uncounted (every retry and park of
    // the schedule stays as it was).
    const rekey = opts.duringWalk ? undefined : this.rekeys.maybe(this.d.client, opts.level === 0);
    // As `webhooks serve` opens it: the snapshot records its key's check (if no run holds the writer).
    if (!opts.duringWalk) resolveSnapshotPiiKey(this.d.world.path, SIM_PII_KEY.toString("utf8"));
    let report: Awaited<ReturnType<typeof drainInbox>> | undefined;
    let threw: unknown;
    try {
      report = await drainInbox({
        inbox: this.inbox,
        source: rekey?.source ?? this.d.client,
        store: port,
        // Retries come due in simulated time: the next drain a run later, or the next day.
        settings: { batchSize: 8, maxAttempts: 3, retryBaseMs: 5_000, retryCapMs: 30_000 },
        deletePolicy: this.d.policy,
        concurrency: 1,
        now: this.d.world.clock.now,
        random: () => random.next(),
      });
    } catch (e) {
      threw = e;
    } finally {
      if (!opts.duringWalk) this.d.server.endRun();
      db.close();
    }
    const after = this.rows();
    const what = `drain ${n} (${where})`;
    if (threw !== undefined || !report) {
      this.violations.push({ kind: "webhook-drain-threw", message: `${what}: drainInbox threw: ${threw instanceof Error ? threw.message : String(threw)}` });
      return;
    }
    this.bump(opts.duringWalk ? "webhook drains during a walk" : "webhook drains");
    if (report.busy) this.bump("webhook drains that waited for a walk");
    this.bump("webhook events applied", report.applied);
    this.bump("webhook events parked", report.parked);
    this.bump("webhook refetches retrying", report.retrying);
    this.trace.push(
      `  (webhooks) ${what}: runs [${report.runs.map((r) => `${r.runId} ${r.status} ${r.members}`).join(", ")}] applied ${report.applied}, retrying ${report.retrying}, parked ${report.parked}` +
        `${report.busy ? `, BUSY ${report.busy.code}` : ""}${report.error ? `, ERROR ${report.error.code}` : ""}`,
    );
    // A re-keying during the refetch is undone first (a rekey back), then no run may record another key.
    if (rekey?.happened) {
      this.trace.push(`  (webhooks) ${what}: the snapshot was re-keyed during the refetch`);
      this.violations.push(...rekey.finish(what, report));
    }
    const stale = staleKeyRuns(this.d.world.db);
    if (stale.length) this.violations.push({ kind: "key-stale-version", message: `${what}: runs ${stale.join(", ")} record another PII key than the snapshot's` });
    // Its events stay pending, for a later drain under the key put back.
    if (rekey?.happened && report.applied === 0 && report.busy) return;
    if (opts.duringWalk) return this.checkWaited(what, report, before, after, due);
    if (report.busy) this.violations.push({ kind: "webhook-drain", message: `${what}: busy although no sync holds the snapshot: ${report.busy.message}` });
    if (report.error) this.violations.push({ kind: "webhook-drain", message: `${what}: ${report.error.code}: ${report.error.message}` });
    this.checkApplied(what, report.runs.map((r) => r.runId), before, after, stateBefore!);
    if (report.applied > 0 && this.rng.chance(0.3)) await this.resendApplied(what, after);
  }

  /** During a walk: busy, no run, and every event exactly as it was. */
  private checkWaited(what: string, report: Awaited<ReturnType<typeof drainInbox>>, before: InboxRow[], after: InboxRow[], due: boolean): void {
    if ((due && !report.busy) || report.runs.length > 0 || report.applied > 0) {
      this.violations.push({
        kind: "webhook-no-wait",
        message: `${what}: a sync held the snapshot, yet the worker ${report.busy ? "" : "was not told busy, "}recorded ${report.runs.length} run(s) and applied ${report.applied} event(s)${report.error ? ` (${report.error.code})` : ""}`,
      });
    }
    if (JSON.stringify(before) !== JSON.stringify(after)) this.violations.push({ kind: "webhook-no-wait", message: `${what}: the inbox changed while the worker waited for a sync` });
  }

  private checkApplied(what: string, runIds: number[], before: InboxRow[], after: InboxRow[], stateBefore: ReturnType<typeof snapshotState>): void {
    const db = this.d.world.db;
    const was = new Map(before.map((r) => [r.id, r.state]));
    const applied = new Set(after.filter((r) => r.state === "applied" && was.get(r.id) === "pending").map((r) => r.memberId!));
    const want = expectedState(this.d.model, SIM_PII_KEY);
    const got = snapshotState(db);
    const stale: string[] = [];
    for (const id of applied) {
      const m = this.d.model.members.get(id);
      if (!m) continue; // a 404 deletes nothing: the next full walk decides
      if (JSON.stringify(got.members.get(id)) !== JSON.stringify(want.members.get(id))) stale.push(`members ${id}`);
      for (const c of m.coverages) if (JSON.stringify(got.coverages.get(c.id)) !== JSON.stringify(want.coverages.get(c.id))) stale.push(`coverages ${c.id} of ${id}`);
    }
    if (stale.length) this.violations.push({ kind: "webhook-stale", message: `${what}: applied, yet unlike the service at its refetch: ${stale.slice(0, 6).join("; ")}` });
    if (runIds.length === 0) return;
    const jobs = db.prepare(`SELECT run_id, job FROM runs WHERE run_id IN (${runIds.map(() => "?").join(",")})`).all(...runIds) as { run_id: number; job: string }[];
    const wrongJob = jobs.filter((j) => j.job !== WEBHOOK_JOB);
    if (wrongJob.length || jobs.length !== runIds.length) this.violations.push({ kind: "webhook-records", message: `${what}: runs ${runIds.join(", ")} are not all recorded as ${WEBHOOK_JOB} runs` });
    // The changes recorded are exactly what changed (a member refetched unchanged records nothing).
    const recorded = recordedChanges(db, runIds);
    const changed = diffStates(stateBefore, got);
    if (JSON.stringify(recorded) !== JSON.stringify(changed)) {
      const extra = recorded.filter((x) => !changed.includes(x));
      const missing = changed.filter((x) => !recorded.includes(x));
      this.violations.push({ kind: "webhook-records", message: `${what}: runs ${runIds.join(", ")} recorded [${extra.join("; ")}] beyond what changed, and not [${missing.join("; ")}]` });
    }
    // A 404, or a coverage its member stops listing, is kept until a full walk proves it gone (the README).
    const deletes = recorded.filter((x) => x.includes(" delete "));
    if (deletes.length) this.violations.push({ kind: "webhook-false-delete", message: `${what}: deleted what a lookup cannot prove gone: ${deletes.join("; ")}` });
  }

  /** A manual retry of some applied events (same ids): each gets its 2xx and nothing in the inbox moves. */
  private async resendApplied(what: string, rows: InboxRow[]): Promise<void> {
    const applied = rows.filter((r) => r.state === "applied" && this.senderOf.has(r.id));
    const picked = [...new Set(Array.from({ length: Math.min(3, applied.length) }, () => this.rng.pick(applied)))];
    for (const r of picked) this.senderOf.get(r.id)!.retry(r.id);
    await Promise.all(picked.map((r) => this.senderOf.get(r.id)!.idle()));
    this.bump("webhook events sent again after applied", picked.length);
    const now = this.rows();
    if (JSON.stringify(now) !== JSON.stringify(rows)) this.violations.push({ kind: "webhook-second-effect", message: `${what}: an applied event sent again changed the inbox` });
  }

  /** The inbox as it is, read on a connection of its own. */
  private rows(): InboxRow[] {
    const db = new BetterSqlite3(this.inboxPath, { readonly: true });
    try {
      return db.prepare("SELECT event_id AS id, member_id AS memberId, state, run_id AS runId FROM inbox_events ORDER BY event_id").all() as InboxRow[];
    } finally {
      db.close();
    }
  }

  async close(): Promise<void> {
    await this.receiver.stop(100).catch(() => undefined);
    this.inbox.close();
  }
}

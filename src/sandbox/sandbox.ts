/**
 * `startSandbox()`: a faithful local copy of the service on 127.0.0.1, with seeded data generated on
 * demand, simulated days, faults and webhooks.
 */
import type { AddressInfo } from "node:net";
import { advanceDay } from "./advance.js";
import type { AnswerShapes } from "./answer-shapes.js";
import type { ApiContext, SandboxKeys } from "./api-routes.js";
import type { ChangeSet } from "./changes.js";
import { EnrollmentRequests } from "./enrollment-requests.js";
import { emptyPlanted, plantInconsistencies, type PlantedInconsistencies } from "./inconsistencies.js";
import { FaultInjector, type FaultPlan } from "./faults.js";
import { Kind, Rng, hash32 } from "./prng.js";
import type { ClaimRec, DesignRec, GroupRec, MemberRec } from "./records.js";
import { claimStream, designStream, groupStream, memberStream } from "./listing.js";
import { createSandboxServer } from "./server.js";
import { SandboxState } from "./state.js";
import { WebhookSender, type DeliveryRecord, type WebhookConfig, type WebhookEventRec } from "./webhooks.js";
import { buildWorld } from "./world.js";
import { Writes } from "./writes.js";

export interface SandboxOptions {
  /** Seed of everything generated; default 1. */
  seed?: number | string;
  /** Approximate number of members; default 1000. */
  members?: number;
  /** Number of groups (policies); default max(2, round(members / 500)). */
  groups?: number;
  /** Average claims per member over the ~180 days of history; default 3. */
  claimsPerMember?: number;
  /** Simulated today, YYYY-MM-DD; default "2026-01-15". advance() moves it one day. */
  today?: string;
  port?: number;
  host?: string;
  /** Documented page sizes; `limit` is honoured up to these. Default 50 / 100. */
  pageSize?: { default?: number; members?: number };
  /** Delay between webhook attempts; default 5000 (tests use ~50). */
  webhookDelayMs?: number;
  /** Time an enrollment request takes from pending to done; default 200. */
  enrollmentDelayMs?: number;
  /** Names of the claim service-date range parameters; default serviceDateFrom / serviceDateTo. */
  claimDateParams?: { from: string; to: string };
  /** Override the generated keys. */
  keys?: Partial<SandboxKeys>;
  faults?: FaultPlan;
  /** Plant one record of each kind the reconciliation report's consistency checks look for. */
  inconsistencies?: boolean;
  /** How each write answers, where the spec shows no body (answer-shapes.ts); default: the project's reading. */
  answerShapes?: AnswerShapes;
  /** The fraction (0-1) of members that also carry SSN fields named in other styles, at depth; default 0. */
  extraSsnKeys?: number;
}

export type IterableResource = "designs" | "groups" | "members" | "claims";
type RecordOf<R extends IterableResource> = R extends "designs" ? DesignRec : R extends "groups" ? GroupRec : R extends "members" ? MemberRec : ClaimRec;

export interface Sandbox {
  readonly baseUrl: string;
  readonly keys: SandboxKeys;
  /** The simulated day, YYYY-MM-DD. */
  readonly today: string;
  /** What `inconsistencies: true` planted (empty lists otherwise). */
  readonly planted: PlantedInconsistencies;
  /** Apply one simulated day; returns exactly what changed, in the sync engine's resources. */
  advance(): Promise<ChangeSet>;
  /** Replace the fault plan (an empty plan clears every fault). */
  setFaults(plan: FaultPlan): void;
  /** Ground truth: every record an unfiltered full walk sees, in walk order. Streams. */
  iterate<R extends IterableResource>(resource: R): Iterable<RecordOf<R>>;
  readonly webhooks: {
    addConfig(input: unknown): WebhookConfig;
    deliveries(): DeliveryRecord[];
    events(): WebhookEventRec[];
    retry(eventId: string): DeliveryRecord[] | undefined;
    /** Resolves when no delivery is in flight or waiting for a retry. */
    idle(): Promise<void>;
  };
  /**
   * What reached the API: requests, answers by status (and `lost`, `reset`, `hang`), and `writes`,
   * every write request by `METHOD path` (e.g. `POST /v3/groups/gp_1/enroll/terminate`).
   */
  stats(): { requests: number; byStatus: Record<string, number>; writes: Record<string, number> };
  close(): Promise<void>;
}

function key(seed: number, n: number, label: string): string {
  const h = (i: number): string => hash32(seed, Kind.key, n, i).toString(16).padStart(8, "0");
  return `sbx_${label}_${h(1)}${h(2)}${h(3)}`;
}

/**
 * Start a sandbox on 127.0.0.1 (port 0 by default).
 * @example
 * const sb = await startSandbox({ seed: 7, members: 5000 });
 * const client = createClient({ baseUrl: sb.baseUrl, apiKey: sb.keys.full });
 * const changes = await sb.advance();
 * await sb.close();
 */
export async function startSandbox(opts: SandboxOptions = {}): Promise<Sandbox> {
  const members = Math.max(1, Math.floor(opts.members ?? 1000));
  const seedInput = opts.seed ?? 1;
  const world = buildWorld({
    seed: seedInput,
    members,
    groups: opts.groups ?? Math.max(2, Math.round(members / 500)),
    claimsPerMember: opts.claimsPerMember ?? 3,
    today: opts.today ?? "2026-01-15",
    extraSsnKeys: opts.extraSsnKeys ?? 0,
  });
  const state = new SandboxState(world);
  const planted = opts.inconsistencies ? plantInconsistencies(state) : emptyPlanted();
  const enrollments = new EnrollmentRequests(new Rng(hash32(world.seed, Kind.write, 1)), opts.enrollmentDelayMs ?? 200);
  const writes = new Writes(state, new Rng(hash32(world.seed, Kind.write, 2)), enrollments);
  const webhooks = new WebhookSender(new Rng(hash32(world.seed, Kind.write, 3)), opts.webhookDelayMs ?? 5000);
  const faults = new FaultInjector(seedInput);
  faults.set(opts.faults ?? {});
  const keys: SandboxKeys = {
    full: opts.keys?.full ?? key(world.seed, 1, "full"),
    readOnly: opts.keys?.readOnly ?? key(world.seed, 2, "readonly"),
    noClaims: opts.keys?.noClaims ?? key(world.seed, 3, "noclaims"),
  };

  // API writes announce each changed member once, batched per tick (so out-of-order has a batch to reorder).
  const pendingEvents = new Set<string>();
  let flushScheduled = false;
  state.onMemberChanged = (id) => {
    pendingEvents.add(id);
    if (!flushScheduled) {
      flushScheduled = true;
      setImmediate(() => {
        flushScheduled = false;
        const ids = [...pendingEvents];
        pendingEvents.clear();
        webhooks.emit(ids);
      });
    }
  };

  const advance = async (): Promise<ChangeSet> => {
    const { changeSet, changedMembers } = advanceDay(state);
    webhooks.emit(changedMembers);
    return changeSet;
  };

  const api: ApiContext = {
    state,
    writes,
    enrollments,
    keys,
    pageSize: { default: opts.pageSize?.default ?? 50, members: opts.pageSize?.members ?? 100 },
    claimDateParams: opts.claimDateParams ?? { from: "serviceDateFrom", to: "serviceDateTo" },
    answers: { ...opts.answerShapes },
  };
  const srv = createSandboxServer(
    api,
    {
      advance,
      setFaults: (p) => faults.set(p),
      faults: () => faults.current,
      webhooks,
      info: () => ({ today: state.todayIso, stats: { ...srv.stats, byStatus: { ...srv.stats.byStatus }, writes: { ...srv.stats.writes } } }),
    },
    faults,
  );
  const host = opts.host ?? "127.0.0.1";
  await new Promise<void>((resolve, reject) => {
    srv.server.once("error", reject);
    srv.server.listen(opts.port ?? 0, host, () => {
      srv.server.off("error", reject);
      resolve();
    });
  });
  const addr = srv.server.address() as AddressInfo;
  const urlHost = host.includes(":") ? `[${host}]` : host === "0.0.0.0" ? "127.0.0.1" : host;
  let closed = false;

  return {
    baseUrl: `http://${urlHost}:${addr.port}`,
    keys,
    planted,
    get today() {
      return state.todayIso;
    },
    advance,
    setFaults: (p) => faults.set(p),
    iterate<R extends IterableResource>(resource: R): Iterable<RecordOf<R>> {
      const make = (): Iterator<unknown> =>
        resource === "designs" ? designStream(state) : resource === "groups" ? groupStream(state) : resource === "members" ? memberStream(state, {}) : claimStream(state, {});
      return { [Symbol.iterator]: () => make() as Iterator<RecordOf<R>> };
    },
    webhooks: {
      addConfig: (i) => webhooks.addConfig(i),
      deliveries: () => webhooks.deliveries(),
      events: () => webhooks.events(),
      retry: (id) => webhooks.retry(id),
      idle: () => webhooks.idle(),
    },
    stats: () => ({ requests: srv.stats.requests, byStatus: { ...srv.stats.byStatus }, writes: { ...srv.stats.writes } }),
    close: async () => {
      if (closed) return;
      closed = true;
      enrollments.close();
      webhooks.close();
      await srv.close();
    },
  };
}

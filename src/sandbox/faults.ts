/**
 * Faults on demand, seeded and reproducible: the same plan and the same request sequence give the
 * same faults. They apply to API routes only, optionally to a path prefix and only after N matching
 * requests (so a walk can fail mid-way: `{afterRequests: 3, http503: 1}` is a persistent outage).
 */
import { Rng, seedToInt } from "./prng.js";

/** A probability in [0, 1], or every Nth matching request. */
export type FaultRate = number | { every: number };

export const ListResources = ["designs", "groups", "members", "claims"] as const;
export type ListResource = (typeof ListResources)[number];

export interface FaultPlan {
  /** Seed of the fault stream; default the sandbox's seed. */
  seed?: number | string;
  /** Only requests whose path starts with this (e.g. "/v2/members"). */
  pathPrefix?: string;
  /** Faults start after this many matching requests have been served normally. */
  afterRequests?: number;
  /**
   * Latency per request, fixed or uniform in [min, max]: a served answer leaves this long after its
   * request arrived, the sandbox's own work inside that time (as a real service's is inside its
   * latency); an injected fault (429, 500, reset...) is answered after it.
   */
  latencyMs?: number | { min: number; max: number };
  http429?: FaultRate;
  /** A 400 (`Validation failed` unless `errorMessage` says otherwise). */
  http400?: FaultRate;
  /** A 403 (`Forbidden` unless `errorMessage` says otherwise): the organization lacks a permission. */
  http403?: FaultRate;
  /** Retry-After seconds sent with a 429 (default 1); null sends none. */
  retryAfterSeconds?: number | null;
  http500?: FaultRate;
  /** A 502 whose body is an HTML page from a "proxy". */
  http502?: FaultRate;
  http503?: FaultRate;
  /**
   * The `message` of an injected 400 or 500, in place of the usual one: a real service's may name
   * the person a request was about ("... taken by member Jane Roe born 1980-02-03").
   */
  errorMessage?: string;
  /**
   * Injected 400, 403 and 500 answers are an HTML error page, as a proxy in front of a service
   * sends, instead of the service's JSON error body (the status is the same).
   */
  htmlErrors?: boolean;
  /** An `errors` array sent with an injected 400 or 500 (the validation failures' field paths). */
  errorIssues?: { path: (string | number)[]; message: string; code: string }[];
  /** Destroy the socket without an answer. */
  reset?: FaultRate;
  /** Never answer (the socket stays open until the client gives up or the sandbox closes). */
  hang?: FaultRate;
  /**
   * A write is applied, then its connection is reset before the answer: the lost answer after which
   * a client must look before sending again. Reads are never hit by it.
   */
  lostAnswer?: FaultRate;
  /** The next page of this resource repeats the same page forever (cursor does not advance). */
  stuckCursorOn?: ListResource;
  /** Serve pages of this size instead of the documented one. */
  pageSizeOverride?: number;
  /** Drop `id` from roughly every Nth listed item (never the last item of a page). */
  itemWithoutIdEvery?: number;
  /** Leave `hasMore` out, so the end of a list is an empty page. */
  omitHasMore?: boolean;
  /**
   * Fields the service added within a version without notice (the spec allows it): merged into
   * every listed item of that resource, e.g. `{ members: { preferredLanguage: "en" } }`.
   */
  extraFields?: Partial<Record<ListResource, Record<string, unknown>>>;
}

export type FaultAction = "none" | "400" | "403" | "429" | "500" | "502" | "503" | "reset" | "hang" | "lost";

const ORDER: readonly [keyof FaultPlan, FaultAction][] = [
  ["hang", "hang"],
  ["reset", "reset"],
  ["http400", "400"],
  ["http403", "403"],
  ["http429", "429"],
  ["http500", "500"],
  ["http502", "502"],
  ["http503", "503"],
  ["lostAnswer", "lost"],
];

/** Decides, per API request, what goes wrong. */
export class FaultInjector {
  private plan: FaultPlan = {};
  private rng = new Rng(1);
  private matched = 0;

  constructor(private readonly defaultSeed: number | string) {}

  set(plan: FaultPlan): void {
    this.plan = { ...plan };
    this.rng = new Rng(seedToInt(plan.seed ?? this.defaultSeed));
    this.matched = 0;
  }

  get current(): FaultPlan {
    return { ...this.plan };
  }

  /** Whether the plan applies to this path at this point of the sequence (counts the request). */
  private applies(path: string): boolean {
    if (this.plan.pathPrefix && !path.startsWith(this.plan.pathPrefix)) return false;
    this.matched++;
    return this.matched > (this.plan.afterRequests ?? 0);
  }

  /** Decide one request's fate and its extra latency. */
  decide(path: string): { action: FaultAction; latencyMs: number; listFaults: boolean } {
    if (!this.applies(path)) return { action: "none", latencyMs: 0, listFaults: false };
    const p = this.plan;
    let latencyMs = 0;
    if (typeof p.latencyMs === "number") latencyMs = p.latencyMs;
    else if (p.latencyMs) latencyMs = p.latencyMs.min + this.rng.next() * Math.max(0, p.latencyMs.max - p.latencyMs.min);
    let chosen: FaultAction = "none";
    for (const [key, action] of ORDER) {
      const rate = p[key] as FaultRate | undefined;
      if (rate === undefined) continue;
      // Draw for every configured fault in a fixed order, so one fault's outcome does not shift another's stream.
      const hit = typeof rate === "number" ? this.rng.next() < rate : rate.every > 0 && this.matched % rate.every === 0;
      if (hit && chosen === "none") chosen = action;
    }
    return { action: chosen, latencyMs, listFaults: true };
  }
}

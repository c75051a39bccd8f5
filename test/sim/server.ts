/**
 * The model served over real HTTP (node:http on 127.0.0.1, port 0), with the documented list
 * shape (`{"data": [...], "hasMore": bool}`), order (createdAt, then id), `startAfter` cursor,
 * filters and bearer key, and `GET /v1/members/{memberId}`. During a run, each request draws its fault from the run's seeded
 * stream: 429 with `Retry-After: 0`, 500/502/503, a reset connection, a malformed 2xx body (an
 * HTML page, or truncated JSON carrying a member's name, date of birth and SSN dashed and
 * undashed), an item without its id; and a change of the model lands before the K-th answer.
 *
 * Requests of one run arrive in a deterministic order (the sync walks one group at a time and
 * reads at most one page ahead), so the per-request draws replay exactly from the seed.
 */
import { createServer, type IncomingMessage, type Server, type ServerResponse } from "node:http";
import type { AddressInfo } from "node:net";
import { WINDOW, type ListResource, type Op, type ServiceModel } from "./model.js";
import type { Rng } from "./rng.js";

export type HasMoreStyle = "flag" | "empty" | "mixed";

export interface ServerRunFaults {
  /** 0: a quiet run; 1: some faults; 2: many. */
  readonly level: 0 | 1 | 2;
  /** Changes of the model that land before the answer to the `after`-th request of the run. */
  readonly midWalk: readonly { readonly after: number; readonly op: Op }[];
  /** A server bug: a cursor past the second page of a member walk is answered with the first page. */
  readonly cursorBug: boolean;
}

export interface ServerRunStats {
  requests: number;
  /** The run asked for far more pages than the data holds: a cursor cycle. */
  runaway: boolean;
  faults: Record<string, number>;
  midWalk: string[];
  /** `resource:id` of every record (children included) a 200 list answer carried in this run. */
  served: Set<string>;
  /** With SIM_DEBUG=1: one line per request (what was asked, what was answered). */
  requestLog: string[];
}

const DEBUG = process.env.SIM_DEBUG === "1";

const PATHS: Record<string, ListResource> = {
  "/v2/designs": "designs",
  "/v2/groups": "groups",
  "/v2/members": "members",
  "/v1/claims/medical": "claims",
};

const RATES: Record<1 | 2, Record<string, number>> = {
  1: { storm: 0.003, r429: 0.03, r5xx: 0.03, reset: 0.015, html: 0.004, truncated: 0.004, noId: 0.01 },
  2: { storm: 0.01, r429: 0.06, r5xx: 0.06, reset: 0.04, html: 0.01, truncated: 0.01, noId: 0.03 },
};

interface Attached {
  model: ServiceModel;
  hasMore: HasMoreStyle;
  run?: {
    faults: ServerRunFaults;
    rng: Rng;
    stats: ServerRunStats;
    budget: number;
    stormLeft: number;
    applied: Set<number>;
    deaf?: boolean;
  };
}

export class SimServer {
  readonly apiKey = "sim-bearer-key-7f3a9c";
  private attached: Attached | undefined;

  private constructor(
    private readonly server: Server,
    readonly baseUrl: string,
  ) {}

  static async start(): Promise<SimServer> {
    let self: SimServer | undefined;
    const server = createServer((req, res) => self!.handle(req, res));
    server.keepAliveTimeout = 60_000;
    await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
    const { port } = server.address() as AddressInfo;
    self = new SimServer(server, `http://127.0.0.1:${port}`);
    return self;
  }

  attach(model: ServiceModel, hasMore: HasMoreStyle): void {
    this.attached = { model, hasMore };
  }

  detach(): void {
    this.attached = undefined;
  }

  beginRun(faults: ServerRunFaults, rng: Rng): void {
    const a = this.attached!;
    a.run = {
      faults,
      rng,
      stats: { requests: 0, runaway: false, faults: {}, midWalk: [], served: new Set(), requestLog: [] },
      // A clean walk needs about walkSize() requests; retries and mid-walk inserts add a few.
      budget: 8 * (a.model.walkSize() + 20),
      stormLeft: 0,
      applied: new Set(),
    };
  }

  /** The client process died: what is served from now on reaches no snapshot. */
  stopRecordingServed(): void {
    if (this.attached?.run) this.attached.run.deaf = true;
  }

  endRun(): ServerRunStats {
    const a = this.attached!;
    const stats = a.run!.stats;
    delete a.run;
    return stats;
  }

  async close(): Promise<void> {
    this.server.closeAllConnections();
    await new Promise<void>((resolve) => this.server.close(() => resolve()));
  }

  private handle(req: IncomingMessage, res: ServerResponse): void {
    const a = this.attached;
    const url = new URL(req.url ?? "/", "http://sim");
    if (!a?.run) return json(res, 503, errorBody(url.pathname, "no run is expected now"));
    const run = a.run;
    const n = ++run.stats.requests;
    if (n > run.budget) {
      run.stats.runaway = true;
      return json(res, 503, errorBody(url.pathname, "request budget of the run exhausted"));
    }
    run.faults.midWalk.forEach((m, i) => {
      if (!run.applied.has(i) && m.after <= n) {
        run.applied.add(i);
        run.stats.midWalk.push(a.model.apply(m.op));
      }
    });
    if (req.headers.authorization !== `Bearer ${this.apiKey}`) return json(res, 401, errorBody(url.pathname, "bad key"));
    const one = /^\/v1\/members\/([^/]+)$/.exec(url.pathname);
    const resource = one ? "members" : PATHS[url.pathname];
    if (!resource || req.method !== "GET") return json(res, 404, errorBody(url.pathname, "no such endpoint"));

    const count = (k: string) => (run.stats.faults[k] = (run.stats.faults[k] ?? 0) + 1);
    let noId = false;
    if (run.faults.level > 0) {
      const rates = RATES[run.faults.level as 1 | 2];
      if (run.stormLeft > 0) {
        run.stormLeft--;
        count("storm");
        return json(res, 503, errorBody(url.pathname, "overloaded"));
      }
      let u = run.rng.next();
      const hit = (k: string) => {
        if (u < rates[k]!) return true;
        u -= rates[k]!;
        return false;
      };
      if (hit("storm")) {
        // More failures in a row than the client's attempts: this page's fetch fails.
        run.stormLeft = 5;
        count("storm");
        return json(res, 503, errorBody(url.pathname, "overloaded"));
      }
      if (hit("r429")) {
        count("429");
        res.setHeader("retry-after", "0");
        return json(res, 429, errorBody(url.pathname, "too many requests"));
      }
      if (hit("r5xx")) {
        const status = run.rng.pick([500, 502, 503]);
        count(String(status));
        if (status === 502 && run.rng.chance(0.5)) return html(res, 502);
        return json(res, status, errorBody(url.pathname, "upstream failure"));
      }
      if (hit("reset")) {
        count("reset");
        req.socket.destroy();
        return;
      }
      if (hit("html")) {
        count("html200");
        return html(res, 200);
      }
      if (hit("truncated")) {
        count("truncated200");
        return raw(res, 200, this.truncatedPhi(a.model, run.rng));
      }
      if (hit("noId")) noId = true;
    }

    if (one) {
      // GET /v1/members/{memberId}: the member alone, or 404 once it is deleted.
      const m = a.model.members.get(decodeURIComponent(one[1]!));
      if (!m) {
        if (DEBUG) run.stats.requestLog.push(`#${n} ${url.pathname} -> 404`);
        return json(res, 404, errorBody(url.pathname, "no such member"));
      }
      if (!run.deaf) {
        run.stats.served.add(`members:${m.id}`);
        for (const c of m.coverages) run.stats.served.add(`coverages:${c.id}`);
      }
      if (DEBUG) run.stats.requestLog.push(`#${n} ${url.pathname} -> the member`);
      return raw(res, 200, serialise(m, a.model.reversedKeys.members));
    }

    const filters: Record<string, string | undefined> = {};
    if (resource === "members" || resource === "claims") filters.groupId = url.searchParams.get("groupId") ?? undefined;
    if (resource === "claims") {
      filters.memberId = url.searchParams.get("memberId") ?? undefined;
      filters.serviceDateFrom = url.searchParams.get("serviceDateFrom") ?? undefined;
      filters.serviceDateTo = url.searchParams.get("serviceDateTo") ?? undefined;
    }
    const all = a.model.listing(resource, filters);
    const size = a.model.pageSize[resource];
    const after = url.searchParams.get("startAfter");
    let start = 0;
    if (after !== null) {
      const at = a.model.createdAt[resource].get(after);
      if (at === undefined) return json(res, 400, errorBody(url.pathname, "startAfter names no record of this list"));
      start = all.findIndex((x) => x.createdAt > at || (x.createdAt === at && x.id > after));
      if (start < 0) start = all.length;
      if (run.faults.cursorBug && resource === "members" && start >= 2 * size) {
        // The bug: the server lost the cursor and starts the list over.
        count("cursorBug");
        start = 0;
      }
    }
    const page = all.slice(start, start + size);
    const more = start + size < all.length;
    const reversed = a.model.reversedKeys[resource];
    const drop = noId && page.length > 0 ? run.rng.int(page.length) : -1;
    if (drop >= 0) count("noId");
    const items = page.map((x, i) => {
      const text = serialise(x.item, reversed);
      // An item whose id is missing: tolerance rule 3 quarantines it (with its PHI masked).
      return i === drop ? text.replace(/^\{"id":"[^"]*",/, "{").replace(/,"id":"[^"]*"\}$/, "}") : text;
    });
    for (const x of run.deaf ? [] : page) {
      run.stats.served.add(`${resource}:${x.id}`);
      // A claim served with its date inside the window (see the claims rule in invariants.ts).
      const date = resource === "claims" ? (x.item as { serviceDateFrom?: string }).serviceDateFrom : undefined;
      if (date !== undefined && date >= WINDOW.from && date <= WINDOW.to) run.stats.served.add(`claims@window:${x.id}`);
      const children = resource === "groups" ? (x.item as { plans: { id: string }[] }).plans : resource === "members" ? (x.item as { coverages: { id: string }[] }).coverages : [];
      for (const ch of children) run.stats.served.add(`${resource === "groups" ? "plans" : "coverages"}:${ch.id}`);
    }
    const withFlag = a.hasMore === "flag" || (a.hasMore === "mixed" && run.rng.chance(0.5));
    const body = `{"data":[${items.join(",")}]${withFlag ? `,"hasMore":${more}` : ""}}`;
    if (DEBUG) {
      run.stats.requestLog.push(
        `#${n} ${url.pathname}?${url.searchParams.toString()} -> ${page.length} item(s) [${page.map((x) => x.id.slice(0, 8)).join(" ")}]${withFlag ? ` hasMore=${more}` : ""}${drop >= 0 ? " (one without id)" : ""}`,
      );
    }
    raw(res, 200, body);
  }

  /** A 2xx body cut short: a member list with a name, a date of birth and SSNs dashed and undashed. */
  private truncatedPhi(model: ServiceModel, rng: Rng): string {
    const [m1, m2] = model.someMembers(2, rng.int(1000));
    if (!m1) return '{"data":[{"id":';
    const digits = (s: string) => s.replace(/\D/g, "");
    const dashed = (s: string) => digits(s).replace(/^(\d{3})(\d{2})(\d{4})$/, "$1-$2-$3");
    const one = (m: typeof m1, ssn: string) =>
      `{"id":"${m.id}","firstName":${JSON.stringify(m.firstName)},"lastName":${JSON.stringify(m.lastName)},"dateOfBirth":"${m.dateOfBirth}","ssn":"${ssn}"`;
    const text = `{"data":[${one(m1, digits(m1.ssn))},"coverages":[]},${one(m2 ?? m1, dashed((m2 ?? m1).ssn))},"address":{"line1":"1 Main St","ci`;
    return text;
  }
}

/** JSON with the keys in the model's order, or reversed at every level. */
function serialise(v: unknown, reversed: boolean): string {
  return JSON.stringify(reversed ? reverseKeys(v) : v);
}

function reverseKeys(v: unknown): unknown {
  if (Array.isArray(v)) return v.map(reverseKeys);
  if (v === null || typeof v !== "object") return v;
  return Object.fromEntries(Object.entries(v).reverse().map(([k, x]) => [k, reverseKeys(x)]));
}

function errorBody(path: string, message: string): string {
  return JSON.stringify({ timestamp: "2026-03-01T00:00:00Z", path, message });
}

function json(res: ServerResponse, status: number, body: string): void {
  res.writeHead(status, { "content-type": "application/json" });
  res.end(body);
}

function raw(res: ServerResponse, status: number, body: string): void {
  res.writeHead(status, { "content-type": "application/json; charset=utf-8" });
  res.end(body);
}

function html(res: ServerResponse, status: number): void {
  res.writeHead(status, { "content-type": "text/html" });
  res.end(`<!DOCTYPE html><html><head><title>${status} Bad Gateway</title></head><body><h1>${status} Bad Gateway</h1><p>nginx</p></body></html>`);
}

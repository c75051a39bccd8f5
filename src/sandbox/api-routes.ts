/**
 * The service's endpoints at their version prefixes (the spec's endpoint table), behind bearer keys.
 * List answers are `{"data": [...], "hasMore": bool}`, serialised page by page straight to the socket.
 */
import type { IncomingMessage, ServerResponse } from "node:http";
import { answerAccepted, answerGroup, answerPatched, answerTerminated, shownRequest, type AnswerShapes } from "./answer-shapes.js";
import type { EnrollmentRequests } from "./enrollment-requests.js";
import type { FaultPlan, ListResource } from "./faults.js";
import { HttpError, readJson, sendJson } from "./http-util.js";
import { isValidIsoDay } from "./dates.js";
import { hash32 } from "./prng.js";
import { claimStream, designStream, groupStream, memberStream, takePage, type ClaimFilter, type MemberFilter } from "./listing.js";
import type { SandboxState } from "./state.js";
import type { Writes } from "./writes.js";

export interface SandboxKeys {
  full: string;
  readOnly: string;
  noClaims: string;
}

export interface ApiContext {
  state: SandboxState;
  writes: Writes;
  enrollments: EnrollmentRequests;
  keys: SandboxKeys;
  pageSize: { default: number; members: number };
  claimDateParams: { from: string; to: string };
  /** How each write answers (the spec shows few of these bodies); default: the project's reading. */
  answers: AnswerShapes;
}

/** Faults that shape list answers, as decided for this request. */
export interface ListFaults {
  plan: FaultPlan;
  stuckPages: Map<string, string>;
}

type Route = { method: string; pattern: RegExp; handle: (ctx: ApiContext, req: IncomingMessage, res: ServerResponse, params: string[], url: URL, lf: ListFaults | undefined) => Promise<void> | void };

const MEMBER_STATUSES = ["active", "terminated", "pending"];

function listQuery(url: URL, names: readonly string[]): Record<string, string | undefined> {
  const out: Record<string, string | undefined> = {};
  for (const n of names) out[n] = url.searchParams.get(n) ?? undefined;
  return out;
}

function checkDates(q: Record<string, string | undefined>, names: readonly string[]): void {
  const bad = names.filter((n) => q[n] !== undefined && !isValidIsoDay(q[n] as string));
  if (bad.length) throw new HttpError(400, "Validation failed", bad.map((n) => ({ path: [n], message: "expected a date YYYY-MM-DD", code: "invalid_format" })));
}

function pageLimit(url: URL, documented: number, lf: ListFaults | undefined): number {
  if (lf?.plan.pageSizeOverride) return lf.plan.pageSizeOverride;
  const raw = url.searchParams.get("limit");
  if (raw === null) return documented;
  const n = Number(raw);
  if (!Number.isInteger(n) || n < 1) throw new HttpError(400, "Validation failed", [{ path: ["limit"], message: "expected a positive integer", code: "invalid_type" }]);
  return Math.min(n, documented);
}

/** Serialise one page; apply the list-shaping faults of this request. */
function sendPage(res: ServerResponse, resource: ListResource, filterKey: string, startAfter: string | undefined, stream: Iterator<{ id: string }>, size: number, lf: ListFaults | undefined): void {
  const stuck = lf?.plan.stuckCursorOn === resource;
  if (stuck && startAfter !== undefined) {
    const cached = lf?.stuckPages.get(`${resource}|${filterKey}|${startAfter}`);
    if (cached) return sendJson(res, 200, cached);
  }
  const page = takePage(stream, size);
  const every = lf?.plan.itemWithoutIdEvery;
  const extra = lf?.plan.extraFields?.[resource];
  const parts = page.items.map((item0, i) => {
    const item = extra ? { ...item0, ...extra } : item0;
    if (every && every > 0 && i < page.items.length - 1 && hash32(item.id.length, ...idWords(item.id)) % every === 0) {
      const { id: _drop, ...rest } = item;
      return JSON.stringify(rest);
    }
    return JSON.stringify(item);
  });
  const body = `{"data":[${parts.join(",")}]${lf?.plan.omitHasMore ? "" : `,"hasMore":${page.hasMore}`}}`;
  if (stuck && lf && page.items.length > 0) {
    if (lf.stuckPages.size > 256) lf.stuckPages.clear();
    lf.stuckPages.set(`${resource}|${filterKey}|${(page.items[page.items.length - 1] as { id: string }).id}`, body);
  }
  sendJson(res, 200, body);
}

function idWords(id: string): [number, number, number] {
  let a = 0;
  let b = 0;
  let c = 0;
  for (let i = 0; i < id.length; i++) {
    const ch = id.charCodeAt(i);
    if (i % 3 === 0) a = (Math.imul(a, 31) + ch) >>> 0;
    else if (i % 3 === 1) b = (Math.imul(b, 31) + ch) >>> 0;
    else c = (Math.imul(c, 31) + ch) >>> 0;
  }
  return [a, b, c];
}

const ROUTES: Route[] = [
  {
    method: "GET",
    pattern: /^\/v2\/designs$/,
    handle: (ctx, _req, res, _p, url, lf) => {
      const startAfter = url.searchParams.get("startAfter") ?? undefined;
      sendPage(res, "designs", "", startAfter, designStream(ctx.state, startAfter), pageLimit(url, ctx.pageSize.default, lf), lf);
    },
  },
  {
    method: "GET",
    pattern: /^\/v2\/groups$/,
    handle: (ctx, _req, res, _p, url, lf) => {
      const startAfter = url.searchParams.get("startAfter") ?? undefined;
      sendPage(res, "groups", "", startAfter, groupStream(ctx.state, startAfter), pageLimit(url, ctx.pageSize.default, lf), lf);
    },
  },
  {
    method: "POST",
    pattern: /^\/v2\/groups$/,
    handle: async (ctx, req, res) => answerGroup(res, ctx.answers, ctx.writes.createGroup(await readJson(req))),
  },
  {
    method: "POST",
    pattern: /^\/v2\/groups\/([^/]+)\/enroll\/initial-enrollment$/,
    handle: async (ctx, req, res, [gp]) => sendJson(res, 200, ctx.writes.initialEnrollment(gp as string, await readJson(req))),
  },
  {
    method: "POST",
    pattern: /^\/v3\/groups\/([^/]+)\/enroll\/add-subscriber$/,
    handle: async (ctx, req, res, [gp]) => answerAccepted(res, ctx.answers.addSubscriber, ctx.writes.addSubscriber(gp as string, await readJson(req)), ctx.answers),
  },
  {
    method: "POST",
    pattern: /^\/v3\/groups\/([^/]+)\/enroll\/terminate$/,
    handle: async (ctx, req, res, [gp]) => {
      const { coverage, member } = ctx.writes.terminate(gp as string, await readJson(req));
      answerTerminated(res, ctx.answers, coverage, member);
    },
  },
  {
    method: "POST",
    pattern: /^\/v3\/groups\/([^/]+)\/enroll\/([^/]+)\/add-dependent$/,
    handle: async (ctx, req, res, [gp, scid]) => answerAccepted(res, ctx.answers.addDependent, ctx.writes.addDependent(gp as string, scid as string, await readJson(req)), ctx.answers),
  },
  {
    method: "GET",
    pattern: /^\/v1\/enrollmentRequests\/([^/]+)$/,
    handle: (ctx, _req, res, [id]) => {
      const r = ctx.enrollments.get(id as string);
      if (!r) throw new HttpError(404, `Enrollment request ${id} not found`);
      sendJson(res, 200, shownRequest(ctx.answers, r));
    },
  },
  {
    method: "GET",
    pattern: /^\/v2\/members$/,
    handle: (ctx, _req, res, _p, url, lf) => {
      const q = listQuery(url, ["groupId", "planId", "effectiveDate", "terminationDate", "status"]) as MemberFilter;
      if (q.status !== undefined && !MEMBER_STATUSES.includes(q.status))
        throw new HttpError(400, "Validation failed", [{ path: ["status"], message: `expected one of ${MEMBER_STATUSES.join(", ")}`, code: "invalid_value" }]);
      checkDates(q as Record<string, string | undefined>, ["effectiveDate", "terminationDate"]);
      const startAfter = url.searchParams.get("startAfter") ?? undefined;
      sendPage(res, "members", JSON.stringify(q), startAfter, memberStream(ctx.state, q, startAfter), pageLimit(url, ctx.pageSize.members, lf), lf);
    },
  },
  {
    method: "GET",
    pattern: /^\/v1\/members\/([^/]+)$/,
    handle: (ctx, _req, res, [id]) => {
      const m = ctx.state.getMember(id as string);
      if (!m) throw new HttpError(404, `Member ${id} not found`);
      sendJson(res, 200, m);
    },
  },
  {
    method: "PATCH",
    pattern: /^\/v2\/members\/([^/]+)$/,
    handle: async (ctx, req, res, [id]) => answerPatched(res, ctx.answers, ctx.writes.patchMember(id as string, await readJson(req))),
  },
  {
    method: "GET",
    pattern: /^\/v1\/claims\/medical$/,
    handle: (ctx, _req, res, _p, url, lf) => {
      const p = ctx.claimDateParams;
      const raw = listQuery(url, ["groupId", "memberId", p.from, p.to]);
      const q: ClaimFilter = { groupId: raw.groupId, memberId: raw.memberId, serviceDateFrom: raw[p.from], serviceDateTo: raw[p.to] };
      checkDates(raw, [p.from, p.to]);
      const startAfter = url.searchParams.get("startAfter") ?? undefined;
      sendPage(res, "claims", JSON.stringify(q), startAfter, claimStream(ctx.state, q, startAfter), pageLimit(url, ctx.pageSize.default, lf), lf);
    },
  },
];

/** Who may do what: read-only keys cannot write, the no-claims key cannot read claims. */
export function authorize(ctx: ApiContext, req: IncomingMessage, path: string): void {
  const h = req.headers.authorization ?? "";
  const m = /^Bearer\s+(.+)$/i.exec(h);
  const key = m?.[1]?.trim();
  if (!key) throw new HttpError(401, "Missing bearer token");
  const { full, readOnly, noClaims } = ctx.keys;
  if (key !== full && key !== readOnly && key !== noClaims) throw new HttpError(401, "Invalid API key");
  if (key === readOnly && req.method !== "GET") throw new HttpError(403, "Forbidden: this key has read-only permissions");
  if (key === noClaims && path.startsWith("/v1/claims")) throw new HttpError(403, "Forbidden: this key lacks the claims permission");
}

function decodeSegment(s: string): string {
  try {
    return decodeURIComponent(s);
  } catch {
    throw new HttpError(400, "Malformed path parameter");
  }
}

/** Route one API request. Throws HttpError for the router to answer. */
export async function handleApi(ctx: ApiContext, req: IncomingMessage, res: ServerResponse, url: URL, lf: ListFaults | undefined): Promise<void> {
  const path = url.pathname;
  let pathMatched = false;
  for (const r of ROUTES) {
    const m = r.pattern.exec(path);
    if (!m) continue;
    pathMatched = true;
    if (r.method !== req.method) continue;
    authorize(ctx, req, path);
    await r.handle(ctx, req, res, m.slice(1).map(decodeSegment), url, lf);
    return;
  }
  if (pathMatched) throw new HttpError(405, `Method ${req.method} not allowed on ${path}`);
  throw new HttpError(404, `No route for ${req.method} ${path}`);
}

/**
 * The spans as an SDK records them (in memory, in this process): a request to the service is a
 * client span per attempt, child of the span around it, named by its route's template; a retry
 * says which one it was; a failure is told by its status or code, never by its text; and a walk's
 * span names its group but never a lookup's member.
 */
import { context, trace } from "@opentelemetry/api";
import { AsyncLocalStorageContextManager } from "@opentelemetry/context-async-hooks";
import { BasicTracerProvider, InMemorySpanExporter, SimpleSpanProcessor } from "@opentelemetry/sdk-trace-base";
import { afterAll, beforeAll, beforeEach, describe, expect, it } from "vitest";
import { createClient } from "../../../src/api/client.js";
import { memberClaimsScope, memberLookupScope, confirmScope } from "../../../src/extract/scopes.js";
import { scopeOf } from "../../../src/store/walk/scopes.js";
import { errorType, inSpan } from "../../../src/telemetry/spans.js";
import { walkAttributes } from "../../../src/pipeline/walk-attributes.js";
import { mockService } from "../../helpers/mock-service.js";

const ORIGIN = "http://svc.test:8443";
const MEMBER = "5db55837-dd0e-44f7-9dd0-5f350db2cbe9";
const exporter = new InMemorySpanExporter();
const svc = mockService(ORIGIN);

beforeAll(() => {
  context.setGlobalContextManager(new AsyncLocalStorageContextManager().enable());
  trace.setGlobalTracerProvider(new BasicTracerProvider({ spanProcessors: [new SimpleSpanProcessor(exporter)] }));
});
afterAll(() => {
  trace.disable();
  context.disable();
});
beforeEach(() => exporter.reset());

const client = (maxAttempts = 1) => createClient({ baseUrl: ORIGIN, apiKey: "unit-key-9b1d", dispatcher: svc.agent, retry: { maxAttempts, baseMs: 1, capMs: 1 } });

describe("a request's spans", () => {
  it("is a client span per attempt under the span around it, named by the template, with the status and the retry", async () => {
    svc.agent.get(ORIGIN).intercept({ method: "GET", path: (p) => p.startsWith(`/v1/members/${MEMBER}`) }).reply(503, "{}");
    svc.reply("GET", `/v1/members/${MEMBER}`, 200, { id: MEMBER, firstName: "Lucas" });
    await inSpan("outer", {}, () => client(2).memberText(MEMBER));
    const spans = exporter.getFinishedSpans();
    const outer = spans.find((s) => s.name === "outer")!;
    const attempts = spans.filter((s) => s.name !== "outer");
    expect(attempts.map((s) => s.name)).toEqual(["GET /v1/members/{id}", "GET /v1/members/{id}"]);
    for (const s of attempts) {
      expect(s.parentSpanContext?.spanId).toBe(outer.spanContext().spanId);
      expect(s.spanContext().traceId).toBe(outer.spanContext().traceId);
      expect(s.kind).toBe(2); // CLIENT
    }
    expect(attempts[0]!.attributes).toEqual({
      "http.request.method": "GET",
      "server.address": "svc.test",
      "server.port": 8443,
      "url.template": "/v1/members/{id}",
      "http.response.status_code": 503,
      "error.type": "503",
    });
    expect(attempts[0]!.status.code).toBe(2); // ERROR
    expect(attempts[1]!.attributes).toMatchObject({ "http.request.resend_count": 1, "http.response.status_code": 200 });
    expect(attempts[1]!.status.code).toBe(0);
    expect(JSON.stringify(spans.map((s) => [s.name, s.attributes, s.events, s.status]))).not.toContain(MEMBER);
  });

  it("names a list's page by its path alone: neither the cursor (a member's id) nor any filter is in it", async () => {
    svc.reply("GET", "/v2/members", 200, { data: [{ id: MEMBER }], hasMore: true });
    svc.reply("GET", "/v2/members", 200, { data: [], hasMore: false });
    const seen: unknown[] = [];
    for await (const p of client().pages("members", { groupId: "100000" })) seen.push(...p.items);
    const spans = exporter.getFinishedSpans();
    expect(spans.map((s) => s.name)).toEqual(["GET /v2/members", "GET /v2/members"]);
    expect(seen).toHaveLength(1);
    expect(JSON.stringify(spans.map((s) => [s.name, s.attributes]))).not.toMatch(new RegExp(`${MEMBER}|100000|startAfter`));
  });

  it("tells a connection that failed by its code, not its message", async () => {
    svc.agent.get(ORIGIN).intercept({ method: "GET", path: "/v2/designs" }).replyWithError(Object.assign(new Error(`refused for ${MEMBER}`), { code: "ECONNREFUSED" }));
    await expect(client().getJson("/v2/designs")).rejects.toThrow();
    const [span] = exporter.getFinishedSpans();
    expect(span!.status).toEqual({ code: 2 });
    expect(span!.events).toEqual([]);
    expect(span!.attributes["error.type"]).toMatch(/^[A-Za-z_]+$/);
    expect(JSON.stringify(span!.attributes)).not.toContain(MEMBER);
  });
});

describe("errorType", () => {
  it("is a code or a class, never the message", () => {
    expect(errorType(Object.assign(new Error("Lucas Scott 338-10-5506"), { code: "SNAPSHOT_BUSY" }))).toBe("SNAPSHOT_BUSY");
    expect(errorType(new TypeError("Lucas Scott"))).toBe("TypeError");
    expect(errorType(Object.assign(new Error("x"), { code: "Lucas Scott 338-10-5506" }))).toBe("Error");
    expect(errorType("Lucas")).toBe("Error");
  });
});

describe("walkAttributes", () => {
  it("names the resource and a listing's group, and never a lookup's member", () => {
    expect(walkAttributes(scopeOf("members", { groupId: "100000" }))).toEqual({ "benefits_sync.resource": "members", "benefits_sync.walk.lookup": false, "benefits_sync.group.id": "100000" });
    expect(walkAttributes(scopeOf("claims", { groupId: "1", from: "2025-01-01", to: "2025-12-31" }))).toEqual({ "benefits_sync.resource": "claims", "benefits_sync.walk.lookup": false, "benefits_sync.group.id": "1" });
    for (const s of [memberLookupScope(MEMBER), memberClaimsScope(MEMBER)]) {
      expect(walkAttributes(s)).toEqual({ "benefits_sync.resource": s.resource, "benefits_sync.walk.lookup": true });
    }
    expect(walkAttributes(confirmScope("members", "7"))).toEqual({ "benefits_sync.resource": "members", "benefits_sync.walk.lookup": true, "benefits_sync.group.id": "7" });
  });
});

describe("inSpan", () => {
  it("ends a span whose work outlives its function when that work settles, failed if it fails", async () => {
    let finish!: (e?: Error) => void;
    const later = new Promise<void>((resolve, reject) => (finish = (e) => (e ? reject(e) : resolve())));
    later.catch(() => undefined);
    await inSpan("walk", {}, async () => ({ stored: later }), { until: (r) => r.stored });
    expect(exporter.getFinishedSpans()).toHaveLength(0);
    finish(Object.assign(new Error("Lucas"), { code: "DISK_FULL" }));
    await later.catch(() => undefined);
    await new Promise((r) => setImmediate(r));
    const [span] = exporter.getFinishedSpans();
    expect([span!.name, span!.attributes, span!.status]).toEqual(["walk", { "error.type": "DISK_FULL" }, { code: 2 }]);
  });
});

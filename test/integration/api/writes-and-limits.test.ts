import { describe, expect, it } from "vitest";
import { createClient } from "../../../src/api/client.js";
import { TimeoutError } from "../../../src/errors.js";
import { json, apiTestFixture, type TestServer } from "./harness.js";

const KEY = "wl-key-61c0de2b8f57";
const { probe, start } = apiTestFixture(KEY);
let server: TestServer | undefined;

describe("enrollment requests", () => {
  it("add-subscriber, then waitForEnrollmentRequest polls until it succeeds", async () => {
    const statuses = ["pending", "processing", "succeeded"];
    let polls = 0;
    server = await start((_req, res, hit) => {
      if (hit.method === "POST") return json(res, 202, { enrollmentRequestId: "er-1" });
      json(res, 200, { id: "er-1", status: statuses[Math.min(polls++, 2)], createdAt: "2025-01-01T00:00:00Z", extra: { kept: true } });
    });
    // Pauses recorded, not slept: their lengths are the claim, and arrival times jitter under load.
    const pauses: number[] = [];
    const c = createClient({ baseUrl: server.url, apiKey: KEY, logger: probe.logger, random: () => 0.5, sleep: async (ms) => void pauses.push(ms) });
    const accepted = await c.addSubscriber("gp-1", {
      subscribers: [{ plan: "p1", self: { firstName: "A", lastName: "B", dateOfBirth: "1990-01-01", ssn: "123456789", memberType: "employee" } }],
    });
    const done = await c.waitForEnrollmentRequest(accepted.enrollmentRequestId as string, { intervalMs: 20, timeoutMs: 5000 });
    expect(done.status).toBe("succeeded");
    expect(done.extra).toEqual({ kept: true });
    expect(server.hits.map((h) => `${h.method} ${h.path}`)).toEqual([
      "POST /v3/groups/gp-1/enroll/add-subscriber",
      "GET /v1/enrollmentRequests/er-1",
      "GET /v1/enrollmentRequests/er-1",
      "GET /v1/enrollmentRequests/er-1",
    ]);
    // Polls back off: the ceiling doubles from intervalMs, each pause 3/4 of it at random 0.5.
    expect(pauses).toEqual([15, 30]);
    await c.close();
  });

  it("a request that never settles ends with a TimeoutError at the deadline, not before", async () => {
    server = await start((_req, res) => json(res, 200, { id: "er-2", status: "pending" }));
    const c = createClient({ baseUrl: server.url, apiKey: KEY, logger: probe.logger });
    const started = performance.now();
    const err = await probe.reject(c.waitForEnrollmentRequest("er-2", { timeoutMs: 400, intervalMs: 50 }));
    expect(err).toBeInstanceOf(TimeoutError);
    expect((err as TimeoutError).code).toBe("TIMEOUT");
    // A lower bound only: load can make the end later, never earlier.
    expect(performance.now() - started).toBeGreaterThanOrEqual(390);
    expect(server.hits.length).toBeGreaterThan(1);
    await c.close();
  });
});

describe("shared limits", () => {
  it("never has more requests in flight than the concurrency limit", async () => {
    // Answers are held until every attempt the client has sent is at the server: then it can send
    // no more until one is answered, so what the server holds is what the client has in flight.
    // No hold of a fixed length: arrival times under load decide nothing.
    const held: (() => void)[] = [];
    let answered = 0;
    let peak = 0;
    let sent = () => 0;
    server = await start((_req, res) => {
      held.push(() => json(res, 200, { ok: true }));
      peak = Math.max(peak, held.length);
      if (held.length + answered === sent()) {
        answered += held.length;
        for (const answer of held.splice(0)) answer();
      }
    });
    const c = createClient({ baseUrl: server.url, apiKey: KEY, logger: probe.logger, concurrency: 3 });
    sent = () => c.stats.requests;
    await Promise.all(Array.from({ length: 12 }, (_, i) => c.getJson(`/v1/members/m${i}`)));
    expect(server.hits).toHaveLength(12);
    expect(peak).toBe(3);
    await c.close();
  });

  it("spaces requests by the requests-per-second budget across concurrent calls", async () => {
    server = await start((_req, res) => json(res, 200, { ok: true }));
    const c = createClient({ baseUrl: server.url, apiKey: KEY, logger: probe.logger, concurrency: 4, requestsPerSecond: 20 });
    const started = performance.now();
    await Promise.all(Array.from({ length: 6 }, (_, i) => c.getJson(`/v1/members/m${i}`)));
    expect(server.hits).toHaveLength(6);
    // 20 per second is one every 50 ms: the sixth request cannot leave before 5 x 50 ms after the
    // first call. A lower bound from the test's own start, so that no arrival jitter can break it
    // (gaps between arrivals can shrink under load); the spacing of each departure is
    // test/unit/api/rate-limiter.test.ts, on a fake clock. Without a limiter this takes a few ms.
    const last = Math.max(...server.hits.map((h) => h.at));
    expect(last - started).toBeGreaterThanOrEqual(5 * 50 - 2);
    await c.close();
  });
});

import { describe, expect, it } from "vitest";
import { createClient, type ClientOptions } from "../../../src/api/client.js";
import { RateLimitError, ServerError, TransportError } from "../../../src/errors.js";
import { closedPort } from "../../helpers/ports.js";
import { json, apiTestFixture, type Handler, type TestServer } from "./harness.js";

const KEY = "rt-key-9a7c2e11f04b";
const { probe, start } = apiTestFixture(KEY);
let server: TestServer | undefined;

/** A client whose sleeps are recorded and skipped, unless `realSleep`. */
async function setup(handler: Handler, opts: Partial<ClientOptions> & { realSleep?: boolean } = {}) {
  server = await start(handler);
  const sleeps: number[] = [];
  const { realSleep, ...rest } = opts;
  const client = createClient({
    baseUrl: server.url,
    apiKey: KEY,
    logger: probe.logger,
    ...(realSleep ? {} : { sleep: async (ms: number) => void sleeps.push(ms) }),
    ...rest,
  });
  return { client, sleeps, hits: server.hits };
}

const ok = (res: Parameters<typeof json>[0]) => json(res, 200, { data: [] });

describe("GET retries", () => {
  // A lower bound on a real wait is the feature; a loaded machine only makes it longer.
  it("429 with Retry-After: 2 waits at least 2 s, really", async () => {
    const { client, hits } = await setup(
      (_req, res, _hit, n) => (n === 0 ? json(res, 429, { message: "slow down" }, { "retry-after": "2" }) : ok(res)),
      { realSleep: true },
    );
    const started = performance.now();
    expect(await client.getJson("/v2/members")).toEqual({ data: [] });
    const elapsed = performance.now() - started;
    // Measured from the client's side: arrival times at the server jitter under load.
    expect(elapsed).toBeGreaterThanOrEqual(2000);
    expect(hits).toHaveLength(2);
    expect(client.stats).toEqual({ requests: 2, retries: 1 });
    await client.close();
  });

  it("honours Retry-After as an HTTP date, and caps it", async () => {
    // Far enough ahead that however late the answer is read, some wait is left (a date has whole seconds).
    const date = new Date(Date.now() + 30_000).toUTCString();
    const a = await setup((_req, res, _hit, n) => (n === 0 ? json(res, 503, { message: "busy" }, { "retry-after": date }) : ok(res)));
    await a.client.getJson("/v2/groups");
    expect(a.sleeps).toHaveLength(1);
    expect(a.sleeps[0]).toBeGreaterThan(0);
    expect(a.sleeps[0]).toBeLessThanOrEqual(30_000);
    await a.client.close();
    await server?.close();

    const b = await setup((_req, res, _hit, n) => (n === 0 ? json(res, 429, { message: "x" }, { "retry-after": "120" }) : ok(res)), {
      retry: { retryAfterCapMs: 300 },
    });
    await b.client.getJson("/v2/groups");
    expect(b.sleeps).toEqual([300]);
    await b.client.close();
  });

  it("503 then success: one retry after a full-jitter delay, logged as a warning", async () => {
    const { client, sleeps, hits } = await setup((_req, res, _hit, n) => (n === 0 ? json(res, 503, { message: "unavailable" }) : ok(res)), {
      random: () => 0.5,
    });
    const before = probe.lines.length;
    expect(await client.getJson("/v2/designs")).toEqual({ data: [] });
    expect(hits).toHaveLength(2);
    expect(sleeps).toEqual([125]); // 0.5 * min(10000, 250 * 2^0)
    const warnings = probe.lines.slice(before).filter((l) => l.startsWith("warn retrying"));
    expect(warnings).toHaveLength(1);
    expect(warnings[0]).toContain('"status":503');
    await client.close();
  });

  it("gives up after maxAttempts with the last error; delays grow within their ceilings", async () => {
    const { client, sleeps, hits } = await setup((_req, res) => json(res, 504, { message: "gateway timeout" }), {
      random: () => 0.999,
      retry: { maxAttempts: 4, baseMs: 100, capMs: 300 },
    });
    const err = await probe.reject(client.getJson("/v2/members"));
    expect(err).toBeInstanceOf(ServerError);
    expect((err as ServerError).status).toBe(504);
    expect((err as ServerError).retryable).toBe(true);
    expect(hits).toHaveLength(4);
    expect(sleeps).toEqual([99, 199, 299]);
    await client.close();
  });

  it("429 without Retry-After backs off, and the final error is a RateLimitError", async () => {
    const { client, sleeps } = await setup((_req, res) => json(res, 429, { message: "too many" }), { retry: { maxAttempts: 2 } });
    const err = await probe.reject(client.getJson("/v2/members"));
    expect(err).toBeInstanceOf(RateLimitError);
    expect(sleeps).toHaveLength(1);
    expect(sleeps[0]).toBeLessThanOrEqual(250);
    await client.close();
  });

  it("a reset connection is retried", async () => {
    const { client, hits } = await setup((req, res, _hit, n) => (n === 0 ? req.socket.destroy() : ok(res)));
    expect(await client.getJson("/v2/members")).toEqual({ data: [] });
    expect(hits).toHaveLength(2);
    expect(client.stats.retries).toBe(1);
    await client.close();
  });

  it("a refused connection is retried, then reported as a TransportError", async () => {
    const port = await closedPort();
    const sleeps: number[] = [];
    const client = createClient({
      baseUrl: `http://127.0.0.1:${port}`,
      apiKey: KEY,
      logger: probe.logger,
      retry: { maxAttempts: 3 },
      sleep: async (ms) => void sleeps.push(ms),
    });
    const err = await probe.reject(client.getJson("/v2/designs"));
    expect(err).toBeInstanceOf(TransportError);
    expect((err as TransportError).causeCode).toBe("ECONNREFUSED");
    expect(client.stats).toEqual({ requests: 3, retries: 2 });
    await client.close();
  });
});

describe("writes are not replayed once they may have reached the server", () => {
  const body = { subscribers: [{ plan: "p1", self: { firstName: "A", lastName: "B", dateOfBirth: "1990-01-01", ssn: "123456789", memberType: "employee" } }] };

  it("a POST whose connection resets is sent once, and the error says it is not retryable", async () => {
    const { client, hits } = await setup((req) => req.socket.destroy());
    const err = await probe.reject(client.addSubscriber("g1", body));
    expect(err).toBeInstanceOf(TransportError);
    expect((err as TransportError).retryable).toBe(false);
    expect(hits.filter((h) => h.method === "POST")).toHaveLength(1);
    expect(client.stats.retries).toBe(0);
    await client.close();
  });

  it("a POST answered 503 or 429 is sent once", async () => {
    for (const status of [503, 429]) {
      const { client, hits } = await setup((_req, res) => json(res, status, { message: "no" }, { "retry-after": "0" }));
      await probe.reject(client.addSubscriber("g1", body));
      expect(hits).toHaveLength(1);
      await client.close();
      await server?.close();
    }
  });

  it("a PATCH whose connection resets is sent once", async () => {
    const { client, hits } = await setup((req) => req.socket.destroy());
    await probe.reject(client.patchMember("m1", { lastName: "X" }));
    expect(hits).toHaveLength(1);
    await client.close();
  });

  it("a POST whose connection was refused is retried: it cannot have arrived", async () => {
    const port = await closedPort();
    const client = createClient({
      baseUrl: `http://127.0.0.1:${port}`,
      apiKey: KEY,
      logger: probe.logger,
      retry: { maxAttempts: 2 },
      sleep: async () => {},
    });
    const err = await probe.reject(client.addSubscriber("g1", body));
    expect((err as TransportError).causeCode).toBe("ECONNREFUSED");
    expect(client.stats.requests).toBe(2);
    await client.close();
  });
});

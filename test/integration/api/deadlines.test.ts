import { describe, expect, it } from "vitest";
import { createClient } from "../../../src/api/client.js";
import { TransportError } from "../../../src/errors.js";
import { waitUntil } from "../../helpers/wait.js";
import { apiTestFixture, type TestServer } from "./harness.js";

const KEY = "dl-key-3f9b7a0d22c8";
const { probe, start } = apiTestFixture(KEY);
let server: TestServer | undefined;

// Only lower bounds on time here: a deadline must not end a request early, and a loaded machine can
// only make it end later. How much later (the overrun) is printed by `npm run bench`; here the
// error's cause says which deadline ended the request.
describe("deadlines", () => {
  it("a server that never answers fails at the headers deadline, not before", async () => {
    server = await start(() => {}); // accepts, reads the request, never answers
    const c = createClient({ baseUrl: server.url, apiKey: KEY, logger: probe.logger, deadlines: { headersMs: 1000 }, retry: { maxAttempts: 1 } });
    const started = performance.now();
    const err = await probe.reject(c.getJson("/v2/members"));
    const elapsed = performance.now() - started;
    expect(err).toBeInstanceOf(TransportError);
    expect((err as TransportError).causeCode).toBe("UND_ERR_HEADERS_TIMEOUT");
    expect((err as TransportError).retryable).toBe(true);
    expect(elapsed).toBeGreaterThanOrEqual(950);
    await c.close();
  });

  it("with retries, each attempt gets the same deadline", async () => {
    server = await start(() => {});
    const c = createClient({
      baseUrl: server.url,
      apiKey: KEY,
      logger: probe.logger,
      deadlines: { headersMs: 300 },
      retry: { maxAttempts: 3 },
      sleep: async () => {},
    });
    const started = performance.now();
    const err = await probe.reject(c.getJson("/v2/members"));
    expect((err as TransportError).causeCode).toBe("UND_ERR_HEADERS_TIMEOUT");
    expect(server.hits).toHaveLength(3);
    // Each attempt waited its own full deadline (retries sleep 0 here), not a share of one.
    expect(performance.now() - started).toBeGreaterThanOrEqual(3 * 300 - 10);
    await c.close();
  });

  it("a body that trickles forever fails at the body deadline, not before", async () => {
    server = await start((_req, res) => {
      res.writeHead(200, { "content-type": "application/json" });
      res.write('{"data":[');
      const t = setInterval(() => res.write(" "), 100);
      res.on("close", () => clearInterval(t));
    });
    const c = createClient({ baseUrl: server.url, apiKey: KEY, logger: probe.logger, deadlines: { bodyMs: 800 }, retry: { maxAttempts: 1 } });
    const started = performance.now();
    const err = await probe.reject(c.getJson("/v2/members"));
    expect((err as TransportError).causeCode).toBe("BODY_DEADLINE");
    expect(performance.now() - started).toBeGreaterThanOrEqual(790);
    await c.close();
  });

  it("a body that stalls fails with undici's body timeout", async () => {
    server = await start((_req, res) => {
      res.writeHead(200, { "content-type": "application/json" });
      res.write('{"data":[');
    });
    const c = createClient({ baseUrl: server.url, apiKey: KEY, logger: probe.logger, deadlines: { bodyMs: 500 }, retry: { maxAttempts: 1 } });
    const err = await probe.reject(c.getJson("/v2/members"));
    expect(["UND_ERR_BODY_TIMEOUT", "BODY_DEADLINE"]).toContain((err as TransportError).causeCode);
    await c.close();
  });

  it("the caller's abort ends a hanging walk, with the caller's reason", async () => {
    server = await start(() => {});
    // No deadline could end it instead within the test's time: only the abort can.
    const c = createClient({ baseUrl: server.url, apiKey: KEY, logger: probe.logger, deadlines: { headersMs: 600_000 } });
    const ctl = new AbortController();
    const reason = new Error("stopped by the caller");
    const walk = probe.reject(
      (async () => {
        for await (const _ of c.pages("members", {}, { signal: ctl.signal })) void _;
      })(),
    );
    // Aborted while the request hangs at the server.
    const hung = server;
    await waitUntil("the walk's request at the server", () => hung.hits.length === 1);
    ctl.abort(reason);
    expect(await walk).toBe(reason);
    await c.close();
  });
});

import { MockAgent } from "undici";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { createClient } from "../../../src/api/client.js";
import { TransportError } from "../../../src/errors.js";

const ORIGIN = "http://svc.test";
let agent: MockAgent;
let attempts: number;

beforeEach(() => {
  agent = new MockAgent();
  agent.disableNetConnect();
  attempts = 0;
});
afterEach(async () => {
  await agent.close();
});

/** Fail the first attempt with `code`, answer the next ones with `ok`. */
function failOnceWith(method: string, path: string, code: string, ok: unknown) {
  const pool = agent.get(ORIGIN);
  pool.intercept({ method, path }).replyWithError(Object.assign(new Error(`simulated ${code}`), { code }));
  pool.intercept({ method, path }).reply(200, JSON.stringify(ok), { headers: { "content-type": "application/json" } }).persist();
}

/** Every attempt the client hands to the dispatcher is counted here, before MockAgent intercepts it. */
const counting = () =>
  agent.compose((dispatch) => (opts, handler) => {
    attempts++;
    return dispatch(opts, handler);
  });

const client = () =>
  createClient({ baseUrl: ORIGIN, apiKey: "replay-unit-key-77", dispatcher: counting(), retry: { maxAttempts: 3, baseMs: 0 }, sleep: async () => {} });

const group = { groupId: "G-1", adminEmail: "a@b.test", sponsorName: "S", ein: "12-3456789", planDesignId: "d1", benefitBundleId: "b1", vendorId: "v1" };

describe("a write is replayed only when the request provably never left", () => {
  it.each(["ETIMEDOUT", "EHOSTUNREACH", "ENETUNREACH", "ECONNRESET", "UND_ERR_SOCKET", "UND_ERR_HEADERS_TIMEOUT"])(
    "POST failing with %s is sent once, never twice",
    async (code) => {
      failOnceWith("POST", "/v2/groups", code, { id: "g2" });
      const err = await client().createGroup(group as never).then(
        () => undefined,
        (e: unknown) => e,
      );
      expect(err).toBeInstanceOf(TransportError);
      expect((err as TransportError).causeCode).toBe(code);
      expect((err as TransportError).retryable).toBe(false);
      expect(attempts).toBe(1);
    },
  );

  it.each(["ETIMEDOUT", "EHOSTUNREACH", "ENETUNREACH"])("PATCH failing with %s is sent once", async (code) => {
    failOnceWith("PATCH", "/v2/members/m1", code, { id: "m1" });
    await expect(client().patchMember("m1", { lastName: "C" })).rejects.toBeInstanceOf(TransportError);
    expect(attempts).toBe(1);
  });

  it.each(["ECONNREFUSED", "UND_ERR_CONNECT_TIMEOUT", "EAI_AGAIN"])("POST failing with %s is retried", async (code) => {
    failOnceWith("POST", "/v2/groups", code, { id: "g2" });
    await expect(client().createGroup(group as never)).resolves.toMatchObject({ groupPolicyId: "g2" });
    expect(attempts).toBe(2);
  });

  it.each(["ETIMEDOUT", "EHOSTUNREACH", "ENETUNREACH", "ECONNREFUSED", "ECONNRESET"])("a GET failing with %s is still retried", async (code) => {
    failOnceWith("GET", "/v2/designs", code, { data: [], hasMore: false });
    await expect(client().getJson("/v2/designs")).resolves.toEqual({ data: [], hasMore: false });
    expect(attempts).toBe(2);
  });
});

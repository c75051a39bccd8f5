import { MockAgent } from "undici";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { createClient, type ServiceClient } from "../../../src/api/client.js";
import { answerLost } from "../../../src/api/lost-answer.js";
import { ApiError, PermissionError, ServerError, TransportError } from "../../../src/errors.js";

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

/*
 * A status is an answer, whatever its body: a refusal of a write (400, 403, 409, 422, 500) is a
 * refusal also when the body is a proxy's HTML page, never an answer lost (which would make the
 * caller look and send it again). Only a gateway's 502 or 504 says the answer was lost.
 */
const HTML = `<!DOCTYPE html><html><head><title>403 Forbidden</title></head><body><h1>Forbidden</h1><p>Jane Roe 1980-02-03 123-45-6789</p><hr>nginx</body></html>`;
const JSON_BODY = JSON.stringify({ timestamp: "2026-01-01T00:00:00Z", path: "/x", message: "Refused" });

type Write = readonly [name: string, method: "POST" | "PATCH", path: string, call: (c: ServiceClient) => Promise<unknown>, people: boolean];
const writes: Write[] = [
  ["create group", "POST", "/v2/groups", (c) => c.createGroup(group as never), false],
  ["initial enrollment", "POST", "/v2/groups/gp1/enroll/initial-enrollment", (c) => c.initialEnrollment("gp1", { subscribers: [] } as never), true],
  ["add subscriber", "POST", "/v3/groups/gp1/enroll/add-subscriber", (c) => c.addSubscriber("gp1", { subscribers: [] } as never), true],
  ["add dependent", "POST", "/v3/groups/gp1/enroll/sc1/add-dependent", (c) => c.addDependent("gp1", "sc1", {} as never), true],
  ["terminate", "POST", "/v3/groups/gp1/enroll/terminate", (c) => c.terminate("gp1", { memberId: "m1", coverageId: "c1", terminationDate: "2026-02-01" }), true],
  ["update member", "PATCH", "/v2/members/m1", (c) => c.patchMember("m1", { lastName: "C" }), true],
];

async function answered(w: Write, status: number, body: string, contentType: string): Promise<unknown> {
  const [, method, path, call] = w;
  agent.get(ORIGIN).intercept({ method, path }).reply(status, body, { headers: { "content-type": contentType } }).persist();
  return call(client()).then(
    () => new Error("the write resolved"),
    (e: unknown) => e,
  );
}

const cases = writes.flatMap((w) => [400, 403, 409, 422, 500].flatMap((status) => [[w[0], status, "HTML", w] as const, [w[0], status, "JSON", w] as const]));

describe("a refused write is refused, whatever its body", () => {
  it.each(cases)("%s answering %i with a %s body: the status's error, not a lost answer, sent once", async (_, status, kind, w) => {
    const err = await answered(w, status, kind === "HTML" ? HTML : JSON_BODY, kind === "HTML" ? "text/html" : "application/json");
    expect(err).toBeInstanceOf(ApiError);
    expect((err as ApiError).status).toBe(status);
    if (status === 403) expect(err).toBeInstanceOf(PermissionError);
    if (status === 500) expect(err).toBeInstanceOf(ServerError);
    expect(answerLost(err)).toBe(false);
    expect(attempts).toBe(1);
    expect((err as Error).message).toContain(`answered ${status}`);
    if (kind === "HTML") {
      expect((err as Error).message).toContain("the answer is not JSON");
      // An endpoint that carries people: the page is described, never quoted.
      if (w[4]) expect((err as Error).message).not.toMatch(/Jane|Roe|1980|6789/);
      else expect((err as Error).message).toContain("403 Forbidden");
    }
  });

  it.each(writes.flatMap((w) => [502, 504].map((status) => [w[0], status, w] as const)))("%s answering %i with an HTML page: the answer was lost, and the write is not sent again", async (_, status, w) => {
    const err = await answered(w, status, `<html><body><h1>${status} Gateway</h1></body></html>`, "text/html");
    expect(err).toBeInstanceOf(ServerError);
    expect(answerLost(err)).toBe(true);
    expect(attempts).toBe(1);
  });
});

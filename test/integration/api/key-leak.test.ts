/**
 * An adversarial server that echoes the bearer key back into everything it can (error messages,
 * validation issues, HTML pages, item fields, header values): no error and no log line of the
 * client may contain the key.
 */
import { afterAll, describe, expect, it } from "vitest";
import { createClient } from "../../../src/api/client.js";
import { json, KeyProbe, startServer } from "./harness.js";

const KEY = "leak-key-c0ffee1234abcd";
const probe = new KeyProbe(KEY);
afterAll(() => probe.assertClean());

describe("the key never leaks", () => {
  it("through any error path or log line, even when the server echoes it", async () => {
    const server = await startServer((req, res, hit) => {
      const auth = String(req.headers.authorization ?? "");
      const key = auth.replace(/^Bearer /, "");
      switch (hit.path) {
        case "/v2/groups":
          return json(res, 400, { message: `bad key ${key} / ${auth}`, errors: [{ path: [key], message: `got ${key}` }] });
        case "/v2/designs":
          return json(res, 401, { message: `unknown key ${key}` });
        case "/v2/members":
          return json(res, 403, { message: `${auth} may not` });
        case "/v1/claims/medical":
          res.writeHead(502, { "content-type": "text/html" });
          return res.end(`<html>${auth} ${key}</html>`);
        case "/v1/members/m1":
          return json(res, 200, { id: 1, note: key });
        case "/v1/enrollmentRequests/er":
          return json(res, 429, { message: key }, { "retry-after": key });
        case "/v1/members/reset":
          return req.socket.destroy();
        default:
          return json(res, 404, { message: `no ${hit.path} for ${key}` });
      }
    });
    const c = createClient({
      baseUrl: server.url,
      apiKey: KEY,
      logger: probe.logger,
      retry: { maxAttempts: 2 },
      sleep: async () => {},
    });
    const walk = (gen: AsyncGenerator<unknown>) =>
      (async () => {
        for await (const _ of gen) void _;
      })();
    await probe.reject(walk(c.listGroups()));
    await probe.reject(walk(c.listDesigns()));
    await probe.reject(walk(c.listMembers()));
    await probe.reject(walk(c.listMedicalClaims()));
    await probe.reject(c.getMember("m1"));
    await probe.reject(c.getEnrollmentRequest("er"));
    await probe.reject(c.getMember("reset"));
    await probe.reject(c.patchMember(KEY, { lastName: "x" }));
    await c.close();
    await server.close();

    // The test means something only if the key went out and the echoes came back.
    expect(server.hits.every((h) => h.headers.authorization === `Bearer ${KEY}`)).toBe(true);
    expect(probe.errors).toHaveLength(8);
    expect(probe.errors.map((e) => (e as Error).message).join("\n")).toContain("[redacted]");
    expect(probe.lines.some((l) => l.startsWith("warn retrying"))).toBe(true);
    expect(probe.lines.length).toBeGreaterThan(8);
  });
});

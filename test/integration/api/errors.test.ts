import { describe, expect, it } from "vitest";
import { createClient } from "../../../src/api/client.js";
import {
  ApiError,
  AuthError,
  NotFoundError,
  PermissionError,
  ResponseShapeError,
  ServerError,
} from "../../../src/errors.js";
import { json, apiTestFixture, type TestServer } from "./harness.js";

const KEY = "err-key-0b8e44f2c61d";
const { probe, start } = apiTestFixture(KEY);
let server: TestServer | undefined;

const errorBody = (path: string, message: string, extra: object = {}) => ({ timestamp: "2025-05-01T10:00:00Z", path, message, ...extra });

async function failWith(status: number, body: unknown, call: (c: ReturnType<typeof createClient>) => Promise<unknown>) {
  server = await start((_req, res, hit) =>
    typeof body === "string"
      ? (res.writeHead(status, { "content-type": "text/html" }), res.end(body))
      : json(res, status, body ?? errorBody(hit.path, `server says ${status}`)),
  );
  const sleeps: number[] = [];
  const c = createClient({ baseUrl: server.url, apiKey: KEY, logger: probe.logger, sleep: async (ms) => void sleeps.push(ms) });
  const err = await probe.reject(call(c));
  await c.close();
  return { err: err as Error, hits: server.hits.length, sleeps };
}

describe("error answers map to typed errors with the server's message", () => {
  it("400 with Zod issues is an ApiError carrying them", async () => {
    const body = errorBody("/v2/groups", "Validation failed", {
      errors: [
        { path: ["adminEmail"], message: "Invalid email", code: "invalid_format" },
        { path: ["ein"], message: "Required", code: "invalid_type" },
      ],
    });
    const group = {
      groupId: "G",
      adminEmail: "x",
      sponsorName: "S",
      ein: "",
      planDesignId: "d",
      benefitBundleId: "b",
      vendorId: "v",
      effectiveDate: "2025-01-01",
      terminationDate: "2025-12-31",
    };
    const { err, hits } = await failWith(400, body, (c) => c.createGroup(group));
    expect(err).toBeInstanceOf(ApiError);
    const e = err as ApiError;
    expect([e.code, e.status, e.retryable, e.serverMessage, e.timestamp]).toEqual(["API_ERROR", 400, false, "Validation failed", "2025-05-01T10:00:00Z"]);
    expect(e.issues.map((i) => i.path.join("."))).toEqual(["adminEmail", "ein"]);
    expect(e.message).toBe("POST /v2/groups answered 400: Validation failed; invalid: adminEmail: Invalid email; ein: Required");
    expect(hits).toBe(1);
  });

  it("401 is an AuthError with advice about the key, not retried", async () => {
    const { err, hits } = await failWith(401, undefined, (c) => c.getJson("/v2/designs"));
    expect(err).toBeInstanceOf(AuthError);
    expect((err as AuthError).code).toBe("AUTH");
    expect(err.message).toMatch(/^GET \/v2\/designs answered 401: server says 401\. Check BENEFITS_API_KEY/);
    expect(hits).toBe(1);
  });

  it("403 is a PermissionError with the operator advice (and the portal advice on a POST)", async () => {
    const { err } = await failWith(403, undefined, (c) => c.getMember("m1"));
    expect(err).toBeInstanceOf(PermissionError);
    // A people endpoint: its message is described, never quoted (it may name the member).
    expect(err.message).toContain("answered 403: its message not quoted");
    expect(err.message).not.toContain("server says");
    expect(err.message).toContain("The service operator must adjust your organization's permissions");
    await server?.close();
    const post = await failWith(403, undefined, (c) => c.addSubscriber("g1", { subscribers: [] as never }));
    expect(post.err.message).toContain("portal permission to view what it creates");
  });

  it("404 is a NotFoundError", async () => {
    const { err } = await failWith(404, undefined, (c) => c.getEnrollmentRequest("nope"));
    expect(err).toBeInstanceOf(NotFoundError);
    expect((err as NotFoundError).path).toBe("/v1/enrollmentRequests/nope");
    // A people endpoint: its message is described, never quoted (it may name the member).
    expect(err.message).toContain("answered 404: its message not quoted");
    expect(err.message).not.toContain("server says");
  });

  it("500 on a write is a non-retryable ServerError with the data-problem hint", async () => {
    const { err, hits } = await failWith(500, undefined, (c) => c.patchMember("m1", { firstName: "A" }));
    expect(err).toBeInstanceOf(ServerError);
    // A people endpoint: its message is described, never quoted (it may name the member).
    expect(err.message).toContain("answered 500: its message not quoted");
    expect(err.message).not.toContain("server says");
    expect(err.message).toContain("missing or malformed nested fields");
    expect((err as ServerError).retryable).toBe(false);
    expect(hits).toBe(1);
  });

  it("500 on a read is retried (a GET has no payload to blame), then thrown as a ServerError", async () => {
    const { err, hits } = await failWith(500, undefined, (c) => c.getJson("/v2/groups"));
    expect(err).toBeInstanceOf(ServerError);
    expect(err.message).toContain("server says 500");
    expect((err as ServerError).retryable).toBe(true);
    expect(hits).toBeGreaterThan(1);
  });

  it("an HTML 502 page is a ServerError by its status (the page quoted), after the retries a 502 deserves", async () => {
    const html = "<!DOCTYPE html><html><head><title>502 Bad Gateway</title></head><body><center><h1>502 Bad Gateway</h1></center><hr>nginx</body></html>";
    const { err, hits, sleeps } = await failWith(502, html, (c) => c.getJson("/v2/designs"));
    expect(err).toBeInstanceOf(ServerError);
    expect((err as ServerError).status).toBe(502);
    expect(err.message).toMatch(/^GET \/v2\/designs answered 502; the answer is not JSON: it began: "<!DOCTYPE html>.*502 Bad Gateway/);
    expect(hits).toBe(5);
    expect(sleeps).toHaveLength(4);
  });

  it("from an endpoint that carries people, the page is described, never quoted", async () => {
    const html = "<html><body>502 for Ana Lee, born 1980-02-29, SSN 123456789</body></html>";
    const { err } = await failWith(502, html, (c) => c.getJson("/v2/members"));
    expect(err).toBeInstanceOf(ServerError);
    expect(err.message).toMatch(/an HTML page \(\d+ bytes\), not quoted/);
    for (const phi of ["Ana", "1980-02-29", "123456789"]) expect(err.message).not.toContain(phi);
  });

  it("a 200 that is not JSON is a ResponseShapeError", async () => {
    server = await start((_req, res) => {
      res.writeHead(200, { "content-type": "text/html" });
      res.end("<html>maintenance</html>");
    });
    const c = createClient({ baseUrl: server.url, apiKey: KEY, logger: probe.logger });
    const err = await probe.reject(c.getJson("/v2/designs"));
    expect(err).toBeInstanceOf(ResponseShapeError);
    expect((err as Error).message).toContain("maintenance");
    await c.close();
  });
});

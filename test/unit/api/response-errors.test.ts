import { describe, expect, it } from "vitest";
import { errorFromResponse } from "../../../src/api/response-errors.js";
import {
  ApiError,
  AuthError,
  NotFoundError,
  PermissionError,
  RateLimitError,
  ServerError,
} from "../../../src/errors.js";

const body = (message: string, extra: object = {}) => JSON.stringify({ timestamp: "2025-01-01T00:00:00Z", path: "/p", message, ...extra });

describe("errorFromResponse", () => {
  it("maps each status to its typed error, with the server's message", () => {
    const cases: [number, new (...a: never[]) => ApiError, string][] = [
      [400, ApiError, "API_ERROR"],
      [401, AuthError, "AUTH"],
      [403, PermissionError, "FORBIDDEN"],
      [404, NotFoundError, "NOT_FOUND"],
      [409, ApiError, "API_ERROR"],
      [429, RateLimitError, "RATE_LIMITED"],
      [500, ServerError, "SERVER_ERROR"],
      [503, ServerError, "SERVER_ERROR"],
    ];
    for (const [status, cls, code] of cases) {
      const e = errorFromResponse({ status, method: "GET", path: "/v2/groups", text: body(`msg ${status}`) });
      expect(e).toBeInstanceOf(cls);
      expect(e.code).toBe(code);
      expect(e.message).toContain(`msg ${status}`);
      expect((e as ApiError).status).toBe(status);
      expect((e as ApiError).timestamp).toBe("2025-01-01T00:00:00Z");
      // A GET has no payload to blame, so its 500 is retryable too.
      expect(e.retryable).toBe(status === 429 || status === 500 || status === 503);
    }
  });

  it("keeps the Zod issues of a 400", () => {
    const e = errorFromResponse({
      status: 400,
      method: "POST",
      path: "/v2/groups",
      text: body("Validation failed", { errors: [{ path: ["adminEmail"], message: "Invalid email", code: "invalid_format" }] }),
    }) as ApiError;
    expect(e.issues).toEqual([{ path: ["adminEmail"], message: "Invalid email", code: "invalid_format" }]);
    expect(e.message).toContain("adminEmail: Invalid email");
  });

  it("maps an HTML page by its status, naming the endpoint, with a short excerpt: a status is an answer whatever the body", () => {
    const html = `<html><body><h1>502 Bad Gateway</h1>${"x".repeat(5000)}</body></html>`;
    const e = errorFromResponse({ status: 502, method: "GET", path: "/v2/designs", text: html }) as ServerError;
    expect(e).toBeInstanceOf(ServerError);
    expect(e.status).toBe(502);
    expect(e.message).toMatch(/^GET \/v2\/designs answered 502; the answer is not JSON: it began: ".*502 Bad Gateway/);
    expect(e.message.length).toBeLessThan(400);
    const refused = errorFromResponse({ status: 403, method: "POST", path: "/v2/groups", text: "<html><h1>403 Forbidden</h1></html>" });
    expect(refused).toBeInstanceOf(PermissionError);
    expect(refused.message).toContain("403 Forbidden");
  });

  it("describes, never quotes, a page from an endpoint that carries people", () => {
    const html = `<html><body><h1>Jane Roe 1970-01-02 123456789</h1></body></html>`;
    for (const path of ["/v2/members?limit=5", "/v1/members/m1", "/v1/claims/medical", "/v3/groups/g1/enroll/add-subscriber"]) {
      const e = errorFromResponse({ status: 502, method: "GET", path, text: html }) as ServerError;
      expect(e).toBeInstanceOf(ServerError);
      expect(e.message).toContain(`an HTML page (${html.length} bytes)`);
      expect(e.message).not.toMatch(/Jane|Roe|1970|6789/);
    }
  });

  it("maps an empty body by status, and keeps Retry-After", () => {
    const e = errorFromResponse({ status: 429, method: "GET", path: "/v2/members", text: "", retryAfterMs: 2000 });
    expect(e).toBeInstanceOf(RateLimitError);
    expect((e as RateLimitError).retryAfterMs).toBe(2000);
    expect(errorFromResponse({ status: 401, method: "GET", path: "/x", text: "" })).toBeInstanceOf(AuthError);
  });

  it("keeps a message from a JSON body that is not the documented shape", () => {
    const e = errorFromResponse({ status: 404, method: "GET", path: "/x", text: '{"error":"gone"}' });
    expect(e.message).toContain("gone");
  });
});

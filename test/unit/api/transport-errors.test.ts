import { describe, expect, it } from "vitest";
import { errorCode, toTransportError } from "../../../src/api/transport-errors.js";
import { TransportError } from "../../../src/errors.js";

const err = (code: string, cause?: unknown) => Object.assign(new Error(`fail ${code}`), { code }, cause ? { cause } : {});

describe("toTransportError", () => {
  it.each([
    ["UND_ERR_CONNECT_TIMEOUT", true, true],
    ["ECONNREFUSED", true, true],
    ["UND_ERR_HEADERS_TIMEOUT", true, false],
    ["UND_ERR_BODY_TIMEOUT", true, false],
    ["BODY_DEADLINE", true, false],
    ["ECONNRESET", true, false],
    ["UND_ERR_SOCKET", true, false],
    ["EPIPE", true, false],
    ["ENOTFOUND", false, false],
    ["EAI_AGAIN", true, true],
    // Also reported on a connection that already carried the request: a write may have arrived.
    ["ETIMEDOUT", true, false],
    ["EHOSTUNREACH", true, false],
    ["ENETUNREACH", true, false],
  ])("%s: GET retryable %s, POST retryable %s", (code, get, post) => {
    const g = toTransportError(err(code), "GET", "/v2/members");
    const p = toTransportError(err(code), "POST", "/v2/groups");
    expect(g).toBeInstanceOf(TransportError);
    expect((g as TransportError).causeCode).toBe(code);
    expect(g.retryable).toBe(get);
    expect(p.retryable).toBe(post);
    expect(toTransportError(err(code), "PATCH", "/v2/members/x").retryable).toBe(post);
    expect(g.code).toBe("TRANSPORT");
  });

  it("looks through undici's socket error to the OS code, and into an AggregateError", () => {
    expect(errorCode(err("UND_ERR_SOCKET", err("ECONNRESET")))).toBe("ECONNRESET");
    expect(errorCode(err("UND_ERR_SOCKET"))).toBe("UND_ERR_SOCKET");
    const agg = Object.assign(new AggregateError([err("ECONNREFUSED")], "all failed"), {});
    expect(errorCode(agg)).toBe("ECONNREFUSED");
  });

  it("tells a caller that a write which failed mid-flight was not replayed", () => {
    expect(toTransportError(err("ETIMEDOUT"), "POST", "/v2/groups").message).toBe(
      "POST /v2/groups failed: timed out; not retried, since the server may have received it: check before sending it again (ETIMEDOUT)",
    );
  });

  it("says what happened in words", () => {
    expect(toTransportError(err("UND_ERR_HEADERS_TIMEOUT"), "GET", "/v2/designs").message).toBe(
      "GET /v2/designs failed: no answer before the headers deadline (UND_ERR_HEADERS_TIMEOUT)",
    );
  });
});

/**
 * One attempt of a request to the service as an HTTP client span, named and described as the
 * semantic conventions' HTTP client spans are (`GET /v1/members/{id}`): the route's template,
 * never its path or query (a member's id is a person's, and so is a cursor past one), the
 * service's host and port, the answer's status, and which retry it was. The client sends with
 * `undici.request`, which no auto-instrumentation sees: the transport calls this around each attempt.
 */
import type { Attributes } from "@opentelemetry/api";
import { inSpan, markFailed, SpanKind } from "./spans.js";

/** `server.address` and `server.port` of a base URL (no userinfo, no path). */
export function serverAttributes(baseUrl: string): Attributes {
  try {
    const u = new URL(baseUrl);
    const port = u.port !== "" ? Number(u.port) : u.protocol === "https:" ? 443 : 80;
    return { "server.address": u.hostname, "server.port": port };
  } catch {
    return {};
  }
}

export interface AttemptSpan {
  readonly method: string;
  /** The route template (api/endpoints.ts `routeOf`), or undefined for a path outside the table. */
  readonly route: string | undefined;
  readonly server: Attributes;
  /** 0 for the first attempt, then 1, 2, ... (`http.request.resend_count`). */
  readonly attempt: number;
}

/**
 * Run one attempt inside its span; the answer's status is recorded, a 4xx or 5xx or a thrown
 * error marks it failed by the status or the error's code.
 */
export function attemptSpan<T extends { readonly status: number }>(a: AttemptSpan, fn: () => Promise<T>): Promise<T> {
  const attributes: Attributes = {
    "http.request.method": a.method,
    ...a.server,
    ...(a.route !== undefined ? { "url.template": a.route } : {}),
    ...(a.attempt > 0 ? { "http.request.resend_count": a.attempt } : {}),
  };
  const name = a.route !== undefined ? `${a.method} ${a.route}` : a.method;
  return inSpan(
    name,
    attributes,
    async (span) => {
      const answer = await fn();
      span.setAttribute("http.response.status_code", answer.status);
      if (answer.status >= 400) markFailed(span, String(answer.status));
      return answer;
    },
    { kind: SpanKind.CLIENT },
  );
}

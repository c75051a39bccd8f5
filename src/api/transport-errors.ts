import { BenefitsSyncError, redact, TransportError } from "../errors.js";

/** Failures before a single byte of the request can have reached the server: safe to retry for any method. */
export const PRE_CONNECT_CODES: ReadonlySet<string> = new Set([
  "ECONNREFUSED",
  "UND_ERR_CONNECT_TIMEOUT",
  "ETIMEDOUT",
  "EHOSTUNREACH",
  "ENETUNREACH",
  "EAI_AGAIN",
]);

/** Connection faults that a GET retries: the pre-connect ones, plus resets and deadlines mid-request. */
export const RETRYABLE_TRANSPORT_CODES: ReadonlySet<string> = new Set([
  ...PRE_CONNECT_CODES,
  "UND_ERR_HEADERS_TIMEOUT",
  "UND_ERR_BODY_TIMEOUT",
  "ECONNRESET",
  "UND_ERR_SOCKET",
  "EPIPE",
  "BODY_DEADLINE",
]);

const DETAILS: Record<string, string> = {
  ECONNREFUSED: "connection refused",
  UND_ERR_CONNECT_TIMEOUT: "connect deadline passed",
  ETIMEDOUT: "connect timed out",
  UND_ERR_HEADERS_TIMEOUT: "no answer before the headers deadline",
  UND_ERR_BODY_TIMEOUT: "the body stalled past the body deadline",
  BODY_DEADLINE: "the body was not complete before the body deadline",
  ECONNRESET: "connection reset",
  UND_ERR_SOCKET: "connection closed by the other side",
  EPIPE: "connection broken while sending",
  ENOTFOUND: "host not found",
  EAI_AGAIN: "host lookup failed temporarily",
};

/** The most specific error code on an undici or Node error, looking through `cause` and AggregateError. */
export function errorCode(err: unknown): string | undefined {
  const seen = new Set<unknown>();
  let cur: unknown = err;
  let outer: string | undefined;
  while (cur && typeof cur === "object" && !seen.has(cur)) {
    seen.add(cur);
    const code = (cur as { code?: unknown }).code;
    if (typeof code === "string") {
      outer ??= code;
      // undici wraps a reset in UND_ERR_SOCKET; the OS code underneath says more.
      if (code !== "UND_ERR_SOCKET") return code;
    }
    const inner = (cur as { cause?: unknown; errors?: unknown[] }).cause ?? (cur as { errors?: unknown[] }).errors?.[0];
    cur = inner;
  }
  return outer;
}

/**
 * Turn a failure of `undici.request` into a {@link TransportError}. `retryable` is true for a GET
 * on a known connection fault, and for any method only when the request cannot have reached the
 * server (refused, connect deadline): a POST that may have arrived is never replayed.
 *
 * @example
 * toTransportError(err, "GET", "/v2/members") // TransportError { code: "TRANSPORT", causeCode: "ECONNRESET", retryable: true }
 */
export function toTransportError(err: unknown, method: string, path: string): BenefitsSyncError {
  if (err instanceof BenefitsSyncError) return err;
  const code = errorCode(err);
  const idempotent = method === "GET" || method === "HEAD";
  const retryable = code !== undefined && (idempotent ? RETRYABLE_TRANSPORT_CODES.has(code) : PRE_CONNECT_CODES.has(code));
  const detail = (code && DETAILS[code]) ?? (err instanceof Error ? err.message : String(err));
  return new TransportError(method, redact(path), code, detail, retryable, err);
}

import { BenefitsSyncError, redact, TransportError } from "../errors.js";

/**
 * Failures that prove the request never left: the connection was refused or never opened within
 * undici's connect deadline, or the host's name never resolved. Only these may replay a POST or
 * PATCH. ETIMEDOUT, EHOSTUNREACH and ENETUNREACH are not among them: the OS also reports them on
 * a connection already carrying the request, which the server may have received.
 */
export const PRE_CONNECT_CODES: ReadonlySet<string> = new Set(["ECONNREFUSED", "UND_ERR_CONNECT_TIMEOUT", "EAI_AGAIN", "ENOTFOUND"]);

/**
 * Connection faults worth another attempt of a GET. A write retries only those that are also in
 * {@link PRE_CONNECT_CODES}. ENOTFOUND is not here: a name that does not resolve rarely starts to
 * within a backoff.
 */
export const RETRYABLE_TRANSPORT_CODES: ReadonlySet<string> = new Set([
  "ECONNREFUSED",
  "UND_ERR_CONNECT_TIMEOUT",
  "EAI_AGAIN",
  "ETIMEDOUT",
  "EHOSTUNREACH",
  "ENETUNREACH",
  "UND_ERR_HEADERS_TIMEOUT",
  "UND_ERR_BODY_TIMEOUT",
  "ECONNRESET",
  "UND_ERR_SOCKET",
  "EPIPE",
  "BODY_DEADLINE",
]);

export const DETAILS: Record<string, string> = {
  ECONNREFUSED: "connection refused",
  UND_ERR_CONNECT_TIMEOUT: "connect deadline passed",
  ETIMEDOUT: "timed out",
  EHOSTUNREACH: "host unreachable",
  ENETUNREACH: "network unreachable",
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
 * Turn a failure of `undici.request` into a {@link TransportError}; `where` (`host:port`) names
 * the service it could not reach. `retryable` is true for a GET
 * on a known connection fault, and for a write only when the fault also proves that the request
 * never left ({@link PRE_CONNECT_CODES}): a POST that may have arrived is never replayed, and its
 * message says so.
 *
 * @example
 * toTransportError(err, "GET", "/v2/members") // TransportError { code: "TRANSPORT", causeCode: "ECONNRESET", retryable: true }
 */
export function toTransportError(err: unknown, method: string, path: string, where?: string): BenefitsSyncError {
  if (err instanceof BenefitsSyncError) return err;
  const code = errorCode(err);
  const idempotent = method === "GET" || method === "HEAD";
  const fault = code !== undefined && RETRYABLE_TRANSPORT_CODES.has(code);
  const retryable = fault && (idempotent || PRE_CONNECT_CODES.has(code));
  let detail = (code && DETAILS[code]) ?? (err instanceof Error ? err.message : String(err));
  if (fault && !retryable) detail += "; not retried, since the server may have received it: check before sending it again";
  return new TransportError(method, redact(path), code, detail, retryable, err, where);
}

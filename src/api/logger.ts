import { redact } from "../errors.js";

/** The slice of a logger the client uses. Fields hold ids, paths and timings only, never a key or PHI. */
export interface Logger {
  debug(msg: string, fields?: Record<string, unknown>): void;
  info(msg: string, fields?: Record<string, unknown>): void;
  warn(msg: string, fields?: Record<string, unknown>): void;
}

/** A logger that drops everything: the default, so the library is silent unless asked. */
export const silentLogger: Logger = { debug() {}, info() {}, warn() {} };

/**
 * Wrap a logger so that every message and string field passes through `redact()` first: a second
 * line of defence in case a server echoes a key into something we log.
 *
 * @example
 * const log = redactingLogger(console);
 * log.warn("retrying", { path: "/v2/members", attempt: 1 });
 */
export function redactingLogger(inner: Logger): Logger {
  // Nothing is written: no message need be cleaned (the client logs a line per request).
  if (inner === silentLogger) return silentLogger;
  const clean = (fields?: Record<string, unknown>) =>
    fields === undefined
      ? undefined
      : Object.fromEntries(Object.entries(fields).map(([k, v]) => [k, typeof v === "string" ? redact(v) : v]));
  return {
    debug: (msg, fields) => inner.debug(redact(msg), clean(fields)),
    info: (msg, fields) => inner.info(redact(msg), clean(fields)),
    warn: (msg, fields) => inner.warn(redact(msg), clean(fields)),
  };
}

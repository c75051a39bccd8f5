import { redact } from "../errors.js";

/**
 * `redact()` every string inside a JSON value (keys included). Error fields such as validation
 * issues come from the server, which may echo a key back; `errors.ts` redacts messages only.
 *
 * @example
 * redactDeep({ path: ["Bearer abc"], message: "x" }) // { path: ["Bearer [redacted]"], message: "x" }
 */
export function redactDeep<T>(value: T): T {
  if (typeof value === "string") return redact(value) as T;
  if (Array.isArray(value)) return value.map((v: unknown) => redactDeep(v)) as T;
  if (value !== null && typeof value === "object") {
    return Object.fromEntries(Object.entries(value).map(([k, v]) => [redact(k), redactDeep(v)])) as T;
  }
  return value;
}

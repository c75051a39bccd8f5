import type { z } from "zod";
import { redact, ResponseShapeError } from "../errors.js";
import { bodyView } from "./body-view.js";
import type { PageResult } from "./paginate.js";

/**
 * Describe a JSON value by its types only (`{id: string, ssn: string, ...}`), never its values:
 * a safe thing to show in an error about a member record, which carries PHI.
 *
 * @example
 * describeShape({ id: "m1", tags: ["a"] }) // "{id: string, tags: array(1)}"
 */
export function describeShape(value: unknown, depth = 1): string {
  if (value === null) return "null";
  if (Array.isArray(value)) return `array(${value.length})`;
  if (typeof value !== "object") return typeof value;
  const entries = Object.entries(value as Record<string, unknown>);
  const shown = entries.slice(0, 20).map(([k, v]) => `${k}: ${depth > 0 ? describeShape(v, depth - 1) : typeof v}`);
  return `{${shown.join(", ")}${entries.length > 20 ? ", …" : ""}}`;
}

/**
 * Parse a response body as JSON, or throw a {@link ResponseShapeError} naming the endpoint (an
 * HTML error page from a proxy is the usual culprit). The error quotes a short redacted excerpt,
 * except from an endpoint that carries people: that body is described by its shape only.
 *
 * @example
 * parseJson('{"data":[]}', "GET /v2/designs") // { data: [] }
 */
export function parseJson(text: string, endpoint: string, status?: number): unknown {
  const what = status === undefined ? "the answer" : `the ${status} answer`;
  if (text.trim() === "") throw new ResponseShapeError(redact(endpoint), `${what} has an empty body where JSON was expected`, bodyView(text, endpoint));
  try {
    return JSON.parse(text) as unknown;
  } catch {
    throw new ResponseShapeError(redact(endpoint), `${what} is not JSON`, bodyView(text, endpoint));
  }
}

/**
 * Read a list answer: `{data: [...]}`, a bare array, `{items: [...]}` or `{results: [...]}`.
 * A boolean `hasMore` at the top level is kept; other top-level keys are ignored.
 *
 * @example
 * unwrapList({ data: [{ id: "a" }], hasMore: false }, "GET /v2/groups") // { items: [{id:"a"}], hasMore: false }
 */
export function unwrapList(body: unknown, endpoint: string): PageResult<unknown> {
  if (Array.isArray(body)) return { items: body };
  if (body !== null && typeof body === "object") {
    const obj = body as Record<string, unknown>;
    const hasMore = typeof obj.hasMore === "boolean" ? obj.hasMore : undefined;
    for (const key of ["data", "items", "results"] as const) {
      if (Array.isArray(obj[key])) return { items: obj[key] as unknown[], hasMore };
    }
  }
  throw new ResponseShapeError(
    redact(endpoint),
    "expected a list: {data: [...]}, a bare array, {items: [...]} or {results: [...]}",
    { excerpt: describeShape(body) },
  );
}

/**
 * Validate a value with a schema, or throw a {@link ResponseShapeError} that names the endpoint,
 * the schema's failures and the value's shape (types, not values: members carry PHI).
 *
 * @example
 * const member = validate(Member, body, "GET /v1/members/{id}", "Member");
 */
export function validate<S extends z.ZodType>(schema: S, value: unknown, endpoint: string, what: string): z.infer<S> {
  const result = schema.safeParse(value);
  if (result.success) return result.data;
  const problems = result.error.issues
    .slice(0, 5)
    .map((i) => `${i.path.join(".") || "(root)"}: ${i.message}`)
    .join("; ");
  throw new ResponseShapeError(redact(endpoint), `not a valid ${what} (${problems})`, { excerpt: describeShape(value) });
}

/**
 * Rows in PostgreSQL's COPY text format: fields separated by TAB, rows ended by LF, `\N` for
 * NULL, and backslash, TAB, LF and CR escaped. PostgreSQL's text type cannot hold a NUL character:
 * one in a value (or `\u0000` in JSON, which jsonb refuses) becomes U+FFFD in the warehouse, so
 * that one odd record cannot stop every load; the snapshot keeps the original.
 */
const SPECIAL = /[\\\t\n\r\u0000]/;
const SPECIAL_ALL = /[\\\t\n\r\u0000]/g;
const ESCAPES: Record<string, string> = { "\\": "\\\\", "\t": "\\t", "\n": "\\n", "\r": "\\r", "\u0000": "\uFFFD" };

export function copyField(v: string | null): string {
  if (v === null) return "\\N";
  return SPECIAL.test(v) ? v.replace(SPECIAL_ALL, (c) => ESCAPES[c]!) : v;
}

/** JSON text for a jsonb field. */
export function copyJson(v: unknown): string {
  if (v === null || v === undefined) return "\\N";
  const s = JSON.stringify(v);
  return copyField(s.includes("\\u0000") ? JSON.stringify(withoutNul(v)) : s);
}

/**
 * JSON text for a jsonb field from text already serialized. `value` gives what it says, asked for
 * only when the text holds a NUL (rare): parsing every record's text again costs more than the
 * rest of the row.
 */
export function copyJsonText(text: string, value: () => unknown): string {
  return text.includes("\\u0000") ? copyJson(value()) : copyField(text);
}

function withoutNul(v: unknown): unknown {
  if (typeof v === "string") return v.replace(/\u0000/g, "\uFFFD");
  if (Array.isArray(v)) return v.map(withoutNul);
  if (v === null || typeof v !== "object") return v;
  return Object.fromEntries(Object.entries(v).map(([k, x]) => [k.replace(/\u0000/g, "\uFFFD"), withoutNul(x)]));
}

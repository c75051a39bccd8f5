/**
 * Flatten a record for a CSV row: nested objects become dotted columns (`address.city`); a list
 * becomes its own file (see `ChildLists`, files/layout.ts) or, when it is not one of those, a JSON cell.
 *
 * @example flatten({a: {b: 1}, c: [1]}) // {"a.b": 1, "c": "[1]"}
 */
export function flatten(record: Record<string, unknown>, skip: ReadonlySet<string> = new Set(), prefix = "", out: Record<string, string> = {}): Record<string, string> {
  for (const [k, v] of Object.entries(record)) {
    const key = prefix ? `${prefix}.${k}` : k;
    if (!prefix && skip.has(k)) continue;
    if (v !== null && typeof v === "object" && !Array.isArray(v)) flatten(v as Record<string, unknown>, skip, key, out);
    else out[key] = cell(v);
  }
  return out;
}

function cell(v: unknown): string {
  if (v === null || v === undefined) return "";
  if (typeof v === "string") return v;
  if (typeof v === "number" || typeof v === "boolean") return String(v);
  return JSON.stringify(v);
}

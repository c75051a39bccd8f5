/**
 * The dotted paths of the fields that differ between two versions of a record. Objects are
 * compared key by key (`address.city`); arrays and scalars as a whole (`lines`), since a list's
 * items have no stable identity of their own inside a record.
 *
 * @example changedFields({a: 1, b: {c: 1}}, {a: 1, b: {c: 2}, d: 0}) // ["b.c", "d"]
 */
export function changedFields(before: unknown, after: unknown, prefix = ""): string[] {
  if (isPlainObject(before) && isPlainObject(after)) {
    const keys = [...new Set([...Object.keys(before), ...Object.keys(after)])].sort();
    const out: string[] = [];
    for (const key of keys) {
      const path = prefix ? `${prefix}.${key}` : key;
      out.push(...changedFields(before[key], after[key], path));
    }
    return out;
  }
  return deepEqual(before, after) ? [] : [prefix || "(record)"];
}

function isPlainObject(v: unknown): v is Record<string, unknown> {
  return v !== null && typeof v === "object" && !Array.isArray(v);
}

function deepEqual(a: unknown, b: unknown): boolean {
  if (a === b) return true;
  // A missing field and a null field are the same observation (tolerance rule 2).
  if ((a === undefined || a === null) && (b === undefined || b === null)) return true;
  if (Array.isArray(a) && Array.isArray(b)) {
    return a.length === b.length && a.every((x, i) => deepEqual(x, b[i]));
  }
  if (isPlainObject(a) && isPlainObject(b)) {
    return changedFields(a, b).length === 0;
  }
  return false;
}

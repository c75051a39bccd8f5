/** Turning zod issues into one line per bad key, for `ConfigError.problems`. */
import type { z } from "zod";
import { maskConnectionPasswords } from "../url-display.js";

/** Keys whose values are never shown, not even when they are the bad value. */
const SECRET_KEYS = new Set(["apiKey", "piiKey", "webhookSecrets"]);

/** An unknown key of a sink that looks like a credential (an S3 sink's access key, secret or session token). */
const CREDENTIAL_KEY = /access.?key|secret|session.?token|credential|password/i;

/** Known keys per object path, for "did you mean" on a misspelt key. */
export type KnownKeys = (path: readonly PropertyKey[]) => readonly string[];

/**
 * One problem per bad key: `http.concurrency: expected a positive integer, got "x" (from the config file)`.
 * The value is quoted only when it is not a secret; a secret is described by its length.
 *
 * @example
 * describeIssues(result.error.issues, input, () => "BENEFITS_DB", () => [])
 */
export function describeIssues(
  issues: readonly z.core.$ZodIssue[],
  input: unknown,
  sourceOf: (path: readonly PropertyKey[]) => string | undefined,
  knownKeys: KnownKeys,
): string[] {
  const out: string[] = [];
  const from = (path: readonly PropertyKey[]) => {
    const s = sourceOf(path);
    return s ? ` (from ${s})` : "";
  };
  for (const issue of issues) {
    if (issue.code === "unrecognized_keys") {
      for (const key of issue.keys) {
        const path = [...issue.path, key];
        if (issue.path[0] === "sinks" && CREDENTIAL_KEY.test(key)) {
          out.push(`${dotted(path)}: credentials never go in the config file (its value is not shown); remove the key, and give the AWS SDK its credentials the usual way: AWS_ACCESS_KEY_ID and AWS_SECRET_ACCESS_KEY in the environment, AWS_PROFILE, or a container or instance role${from(path)}`);
          continue;
        }
        const near = closest(key, knownKeys(issue.path));
        // Read as meant meanwhile (config-remainder.ts): what it holds is checked, and said so.
        const checked = typeof valueAt(input, path) === "object" && meantKey(input, issue.path, key, knownKeys) ? `; what it holds is checked as "${near}"` : "";
        out.push(`${dotted(path)}: unknown key${near ? ` (did you mean "${near}"?)` : ""}${checked}${from(path)}`);
      }
      continue;
    }
    const value = valueAt(input, issue.path);
    out.push(`${dotted(issue.path)}: ${issue.message}, got ${describeValue(value, isSecretPath(issue.path))}${from(issue.path)}`);
  }
  return out;
}

export const dotted = (path: readonly PropertyKey[]) =>
  path.length === 0 ? "(root)" : path.map((p) => (typeof p === "number" ? `[${p}]` : String(p))).join(".").replace(/\.\[/g, "[");

const isSecretPath = (path: readonly PropertyKey[]) => SECRET_KEYS.has(String(path[0]));

export function valueAt(input: unknown, path: readonly PropertyKey[]): unknown {
  let v: unknown = input;
  for (const p of path) {
    if (typeof v !== "object" || v === null) return undefined;
    v = (v as Record<PropertyKey, unknown>)[p];
  }
  return v;
}

function describeValue(value: unknown, secret: boolean): string {
  if (value === undefined) return "nothing";
  if (value === null) return "null";
  if (Array.isArray(value)) return `a list of ${value.length}`;
  if (typeof value === "object") return "an object";
  if (secret) return typeof value === "string" ? `a value of ${value.length} characters (not shown)` : `a ${typeof value} (not shown)`;
  // Masked before it is cut: a password cut in half (`postgres://etl:TopSec…`, no `@` left) is no
  // longer a connection string the masking rule can see.
  const text = JSON.stringify(typeof value === "string" ? maskConnectionPasswords(value) : value);
  return text.length > 60 ? `${text.slice(0, 57)}..."` : text;
}

/**
 * The key a misspelt `key` of the object at `parentPath` was meant to be: the known key nearest to
 * it, when the object does not set that key itself.
 *
 * @example meantKey({ jos: {} }, [], "jos", () => ["jobs", "sinks"]) // "jobs"
 */
export function meantKey(input: unknown, parentPath: readonly PropertyKey[], key: string, knownKeys: KnownKeys): string | undefined {
  const near = closest(key, knownKeys(parentPath));
  const parent = valueAt(input, parentPath);
  return near !== undefined && typeof parent === "object" && parent !== null && !(near in parent) ? near : undefined;
}

/** The known key within edit distance 2, if any: most typos are one or two keystrokes. */
export function closest(key: string, known: readonly string[]): string | undefined {
  let best: { k: string; d: number } | undefined;
  for (const k of known) {
    const d = distance(key.toLowerCase(), k.toLowerCase());
    if (d <= 2 && (!best || d < best.d)) best = { k, d };
  }
  return best?.k;
}

function distance(a: string, b: string): number {
  const row = Array.from({ length: b.length + 1 }, (_, i) => i);
  for (let i = 1; i <= a.length; i++) {
    let prev = row[0]!;
    row[0] = i;
    for (let j = 1; j <= b.length; j++) {
      const tmp = row[j]!;
      row[j] = Math.min(row[j]! + 1, row[j - 1]! + 1, prev + (a[i - 1] === b[j - 1] ? 0 : 1));
      prev = tmp;
    }
  }
  return row[b.length]!;
}

/**
 * What of a configuration the schema refused is still checked, so that one run reports every
 * problem: the keys the schema refused are left out, and a misspelt key one or two keystrokes from
 * a key its object does not set is read as that key (`"jos"` as `"jobs"`, `"schedlue"` as
 * `"schedule"`). A typo in a key used to hide what it holds: the job names and schedules under a
 * misspelt `jobs` appeared only once the typo was fixed. Problems found under such a key are told
 * as the file spells it.
 */
import type { z } from "zod";
import { meantKey, valueAt, type KnownKeys } from "./problems.js";

type Issue = z.core.$ZodIssue;
type Path = readonly PropertyKey[];

export interface Remainder<T> {
  /** The input parsed without the refused keys, the misspelt ones read as meant; undefined when even that fails. */
  readonly data: T | undefined;
  /** The schema's issues with values under a misspelt key (found only once it is read as meant), their paths as the file spells them. */
  readonly issues: readonly Issue[];
  /** A path as the file spells it, as the schema knows it (for the keys known there). */
  readonly meant: (spelt: Path) => Path;
}

/**
 * @example
 * const rest = remainderOf(Config, input, result.error.issues, (p) => keysAt(Config, p));
 * rest.data?.jobs; // the jobs of a file that spelt the key "jos"
 */
export function remainderOf<T>(schema: z.ZodType<T>, input: Record<string, unknown>, first: readonly Issue[], knownKeys: KnownKeys): Remainder<T> {
  const rest = structuredClone(input);
  // Each misspelt key read as meant: its path as spelt in the file, and as the schema knows it.
  const renames: { spelt: Path; meant: Path }[] = [];
  // A path through the longest rename that leads it: each rename's paths are whole already.
  const through = (p: Path, from: "spelt" | "meant", to: "spelt" | "meant"): Path => {
    const r = renames.filter((x) => startsWith(p, x[from])).sort((a, b) => b[from].length - a[from].length)[0];
    return r ? [...r[to], ...p.slice(r[from].length)] : p;
  };
  const spelt = (p: Path) => through(p, "meant", "spelt");
  const meant = (p: Path) => through(p, "spelt", "meant");
  const found: Issue[] = [];
  for (let round = 0, bad = first; round < 6; round++) {
    for (const issue of bad) {
      if (issue.code !== "unrecognized_keys") {
        if (!dropNearest(rest, issue.path)) return { data: undefined, issues: found, meant };
        continue;
      }
      const parent = valueAt(rest, issue.path) as Record<string, unknown> | undefined;
      // Gone with a value refused above it, in this round.
      if (typeof parent !== "object" || parent === null) continue;
      for (const key of issue.keys) {
        const as = meantKey(rest, issue.path, key, knownKeys);
        if (as) {
          parent[as] = parent[key];
          renames.push({ spelt: spelt([...issue.path, key]), meant: [...issue.path, as] });
        }
        delete parent[key];
      }
    }
    const again = schema.safeParse(rest);
    if (again.success) return { data: again.data, issues: found, meant };
    bad = again.error.issues;
    // The schema reported every other issue the first time; new ones are of values read under a meant key.
    for (const issue of bad) {
      if (renames.some((r) => startsWith(issue.path, r.meant))) found.push({ ...issue, path: [...spelt(issue.path)] } as Issue);
    }
  }
  return { data: undefined, issues: found, meant };
}

const startsWith = (p: Path, prefix: Path) => prefix.length <= p.length && prefix.every((k, i) => p[i] === k);

/** Delete the value at `path`, or, when there is none, the nearest value above it; false at the root. */
function dropNearest(input: Record<string, unknown>, path: Path): boolean {
  for (let n = path.length; n > 0; n--) {
    const parent = valueAt(input, path.slice(0, n - 1));
    const key = path[n - 1]!;
    if (typeof parent === "object" && parent !== null && key in parent) {
      delete (parent as Record<PropertyKey, unknown>)[key];
      return true;
    }
  }
  return false;
}

/**
 * The "one run, one folder" check shared by the CLI tests: an output directory's folders, and
 * each folder compared byte for byte with what `export --run N --out OTHER` writes.
 */
import { createHash } from "node:crypto";
import { existsSync, readdirSync, readFileSync, statSync } from "node:fs";
import { join } from "node:path";

/**
 * The run folders under `dir` (hidden temporaries left out), as numbers, in text order (which
 * must be run order); none when `dir` is missing. A folder not named as the contract says fails.
 */
export function runFolders(dir: string): number[] {
  if (!existsSync(dir)) return [];
  const names = readdirSync(dir)
    .filter((n) => !n.startsWith("."))
    .sort();
  for (const n of names) if (!/^\d{8}$/.test(n)) throw new Error(`${dir}/${n}: not a run folder named by its zero-padded run id`);
  return names.map(Number);
}

/**
 * A run's folder name as the contract gives it, written out here rather than taken from the code
 * under test: the run id zero-padded to 8 digits, so that folders sort in run order as text.
 */
export const runDir = (run: number): string => String(run).padStart(8, "0");

/** Every file of one (flat) deltas folder: name -> SHA-256 of its bytes, so a difference shows which file. */
export function folderFiles(dir: string): Record<string, string> {
  const out: Record<string, string> = {};
  for (const f of readdirSync(dir).sort()) out[f] = createHash("sha256").update(readFileSync(join(dir, f))).digest("hex");
  return out;
}

/**
 * Every entry under `dir`, hidden ones included, with its mode and (for a file) the SHA-256 of its
 * bytes: equal before and after a command that must change nothing there.
 */
export function treeHash(dir: string): Record<string, string> {
  const out: Record<string, string> = {};
  const walk = (rel: string): void => {
    for (const name of readdirSync(join(dir, rel)).sort()) {
      const p = join(rel, name);
      const st = statSync(join(dir, p));
      if (st.isDirectory()) {
        out[`${p}/`] = (st.mode & 0o7777).toString(8);
        walk(p);
      } else out[p] = `${(st.mode & 0o7777).toString(8)} ${createHash("sha256").update(readFileSync(join(dir, p))).digest("hex")}`;
    }
  };
  walk("");
  return out;
}

/**
 * The "one run, one folder" check shared by the CLI tests: an output directory's folders, and
 * each folder compared byte for byte with what `export --run N --out OTHER` writes.
 */
import { createHash } from "node:crypto";
import { existsSync, readdirSync, readFileSync } from "node:fs";
import { join } from "node:path";

/** The run folders under `dir` (hidden temporaries left out), as numbers, ascending; none when `dir` is missing. */
export function runFolders(dir: string): number[] {
  if (!existsSync(dir)) return [];
  return readdirSync(dir)
    .filter((n) => !n.startsWith("."))
    .map(Number)
    .sort((a, b) => a - b);
}

/** Every file of one (flat) deltas folder: name -> SHA-256 of its bytes, so a difference shows which file. */
export function folderFiles(dir: string): Record<string, string> {
  const out: Record<string, string> = {};
  for (const f of readdirSync(dir).sort()) out[f] = createHash("sha256").update(readFileSync(join(dir, f))).digest("hex");
  return out;
}

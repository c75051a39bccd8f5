/**
 * The README's shell blocks that a test runs as printed. Such a block's first line is a comment
 * naming it (`# install: a copy, from a clone`), so a test finds its block by that name and a block
 * renamed or dropped from the README fails the test instead of leaving it testing nothing.
 */
import { readFileSync } from "node:fs";
import { fileURLToPath } from "node:url";

export const README = fileURLToPath(new URL("../../README.md", import.meta.url));

/** The lines after the naming comment of each fenced block named `name`, in README order. */
export function readmeBlocks(name: string): string[][] {
  const found: string[][] = [];
  for (const m of readFileSync(README, "utf8").matchAll(/^```[a-z]*\n([\s\S]*?)^```$/gm)) {
    const lines = (m[1] ?? "").replace(/\n$/, "").split("\n");
    if (lines[0] === `# ${name}`) found.push(lines.slice(1));
  }
  return found;
}

/** The lines of the one fenced block named `name` (exactly one must exist). */
export function readmeBlock(name: string): string[] {
  const found = readmeBlocks(name);
  if (found.length !== 1) throw new Error(`README: ${found.length} blocks named "# ${name}" (expected exactly one)`);
  return found[0]!;
}

/**
 * The README's (and docs/'s) shell blocks that a test runs as printed. Such a block's first line is
 * a comment naming it (`# install: a copy, from a clone`), so a test finds its block by that name
 * and a block renamed or dropped from the page fails the test instead of leaving it testing nothing.
 */
import { readFileSync } from "node:fs";
import { fileURLToPath } from "node:url";

export const README = fileURLToPath(new URL("../../README.md", import.meta.url));

/** A page under docs/, by its file name (`census.md`). */
export const docPage = (name: string): string => fileURLToPath(new URL(`../../docs/${name}`, import.meta.url));

/** The lines after the naming comment of each fenced block named `name` in `page`, in page order. */
export function namedBlocks(page: string, name: string): string[][] {
  const found: string[][] = [];
  for (const m of readFileSync(page, "utf8").matchAll(/^```[a-z]*\n([\s\S]*?)^```$/gm)) {
    const lines = (m[1] ?? "").replace(/\n$/, "").split("\n");
    if (lines[0] === `# ${name}`) found.push(lines.slice(1));
  }
  return found;
}

/** The lines of the one fenced block named `name` in `page` (exactly one must exist). */
export function namedBlock(page: string, name: string): string[] {
  const found = namedBlocks(page, name);
  if (found.length !== 1) throw new Error(`${page}: ${found.length} blocks named "# ${name}" (expected exactly one)`);
  return found[0]!;
}

/**
 * A data file a page prints whole, introduced by its name in a line of its own that ends with it
 * (`` `census.csv`: `` or `` `acme.json` (...): ``), then a fenced block: its name and its text.
 */
export function printedFile(page: string, name: string): string {
  const text = readFileSync(page, "utf8");
  const at = text.search(new RegExp(`^\`${name.replace(/\./g, "\\.")}\`[:( ]`, "m"));
  if (at < 0) throw new Error(`${page}: no file \`${name}\` introduced`);
  const block = /```[a-z]*\n([\s\S]*?)^```$/m.exec(text.slice(at))?.[1];
  if (block === undefined) throw new Error(`${page}: no fenced block after \`${name}\``);
  return block;
}

/** The lines after the naming comment of each fenced block named `name` in the README. */
export const readmeBlocks = (name: string): string[][] => namedBlocks(README, name);

/** The lines of the one fenced block named `name` in the README. */
export const readmeBlock = (name: string): string[] => namedBlock(README, name);

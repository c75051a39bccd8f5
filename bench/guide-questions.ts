/**
 * The analyst guide's questions as printed (README "Questions, answered in SQL" and
 * docs/analyst-guide.md), by name: the bench times them and the tests run them exactly as a reader
 * would copy them, so both read them from the documents, never from a copy.
 */
import { readFileSync } from "node:fs";
import { join } from "node:path";

/** Every ```sql block whose first line is `-- question: NAME`, by name. */
export function readmeQuestions(text: string): Map<string, string> {
  const out = new Map<string, string>();
  for (const m of text.matchAll(/^```sql\r?\n([\s\S]*?)^```/gm)) {
    const sql = m[1]!;
    const name = /^-- question: ([a-z0-9]+(?:-[a-z0-9]+)*)\s*\r?\n/.exec(sql)?.[1];
    if (name === undefined) continue;
    if (out.has(name)) throw new Error(`README: question ${name} appears twice`);
    out.set(name, sql);
  }
  return out;
}

/** The guide's questions of the repository at `root`: the README answers the first, docs/analyst-guide.md the rest. */
export function guideQuestions(root: string): Map<string, string> {
  return readmeQuestions(`${readFileSync(join(root, "README.md"), "utf8")}\n${readFileSync(join(root, "docs", "analyst-guide.md"), "utf8")}`);
}

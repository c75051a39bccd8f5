/**
 * House rule: a transaction that writes takes the write lock when it begins (`.immediate()`).
 * In WAL mode SQLite answers SQLITE_BUSY at once, with no busy wait, to a connection that read
 * inside its transaction and then wants to write while another connection writes (the deferred
 * default). Two schedulers starting on one new snapshot failed a run that way (write-lock-waits
 * .test.ts). A deferred transaction is allowed only with a `// deferred:` comment on the line above it
 * saying why (a read-only connection, for one consistent view).
 */
import { readdirSync, readFileSync } from "node:fs";
import { join, relative } from "node:path";
import { describe, expect, it } from "vitest";

const root = join(import.meta.dirname, "..", "..", "..");

function sources(dir: string): string[] {
  return readdirSync(dir, { withFileTypes: true }).flatMap((e) => (e.isDirectory() ? sources(join(dir, e.name)) : e.name.endsWith(".ts") ? [join(dir, e.name)] : []));
}

/** Each `.transaction(` call in `text`: its line and what follows its closing parenthesis. */
export function transactionCalls(text: string): { line: number; after: string; above: string }[] {
  const out: { line: number; after: string; above: string }[] = [];
  for (let i = text.indexOf(".transaction("); i >= 0; i = text.indexOf(".transaction(", i + 1)) {
    let depth = 0;
    let j = i + ".transaction".length;
    for (; j < text.length; j++) {
      if (text[j] === "(") depth++;
      else if (text[j] === ")" && --depth === 0) break;
    }
    const line = text.slice(0, i).split("\n").length;
    const lines = text.split("\n");
    out.push({ line, after: text.slice(j + 1, j + 40).replace(/\s+/g, ""), above: lines[line - 2] ?? "" });
  }
  return out;
}

const immediate = (after: string) => after.startsWith(".immediate") || after.startsWith(".exclusive");

describe("house: transactions that write are immediate", () => {
  it("the scanner tells an immediate transaction from a deferred one", () => {
    const calls = transactionCalls("a.transaction(() => { f(g()); }).immediate();\n// deferred: read-only\nb.transaction(() => 1)();\nc.transaction((x) => x)(2);");
    expect(calls.map((c) => [c.line, immediate(c.after), c.above.includes("// deferred:")])).toEqual([
      [1, true, false],
      [3, false, true],
      [4, false, false],
    ]);
  });

  it("every .transaction( in src is immediate, or says why it may be deferred", () => {
    const offenders = sources(join(root, "src")).flatMap((file) =>
      transactionCalls(readFileSync(file, "utf8"))
        .filter((c) => !immediate(c.after) && !c.above.includes("// deferred:"))
        .map((c) => `${relative(root, file)}:${c.line}`),
    );
    expect(offenders).toEqual([]);
  });
});

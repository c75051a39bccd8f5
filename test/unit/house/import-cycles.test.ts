/**
 * A house with no circles (issue 42): no module of src/ reaches itself through its imports, type
 * imports and lazy imports included. A circle makes a reader walk in a loop to learn what a file
 * depends on, and a value one makes module start order matter. When this fails, each circle is
 * printed as a path: move the version, type or helper both sides need into the file that owns it.
 */
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { dirname, join } from "node:path";
import { fileURLToPath } from "node:url";
import { afterAll, describe, expect, it } from "vitest";
import { importCycles, importGraph } from "../../helpers/import-graph.js";

const root = join(dirname(fileURLToPath(import.meta.url)), "..", "..", "..");

describe("the import graph of src/", () => {
  it("has no cycle", () => {
    const graph = importGraph(root, "src");
    // The graph is really read: the CLI's entry and its imports are in it.
    expect(graph.get("src/cli/main.ts")?.length).toBeGreaterThan(0);
    expect(importCycles(graph)).toEqual([]);
  });
});

describe("the cycle check", () => {
  const dir = mkdtempSync(join(tmpdir(), "bsync-cycles-"));
  afterAll(() => rmSync(dir, { recursive: true, force: true }));
  const write = (path: string, text: string) => {
    mkdirSync(dirname(join(dir, path)), { recursive: true });
    writeFileSync(join(dir, path), text);
  };

  it("sees a cycle over types, a re-export, a folder's index and a lazy import, and prints each as a path", () => {
    write("src/a.ts", 'import type { C } from "./b/index.js";\nexport const a = 1;\nexport type A = C;\n');
    write("src/b/index.ts", 'export { c, type C } from "../c.js";\n');
    write("src/c.ts", 'import { a } from "./a.js";\nexport const c = a;\nexport type C = number;\n');
    write("src/d.ts", 'export async function d() {\n  return (await import("./e.js")).e;\n}\n');
    write("src/e.ts", 'import { d } from "./d.js";\nimport { z } from "zod";\nimport { join } from "node:path";\nexport const e = [d, z, join];\n');
    write("src/leaf.ts", 'import { a } from "./a.js";\nimport { e } from "./e.js";\nexport const leaf = [a, e];\n');

    expect(importCycles(importGraph(dir, "src"))).toEqual([
      "src/a.ts -> src/b/index.ts -> src/c.ts -> src/a.ts",
      "src/d.ts -> src/e.ts -> src/d.ts",
    ]);
  });

  it("finds none in a tree", () => {
    write("tree/top.ts", 'import { mid } from "./mid.js";\nimport { low } from "./low.js";\nexport const top = [mid, low];\n');
    write("tree/mid.ts", 'import type { Low } from "./low.js";\nexport const mid: Low = 1;\n');
    write("tree/low.ts", "export const low = 1;\nexport type Low = number;\n");

    const graph = importGraph(dir, "tree");
    expect(graph.get("tree/top.ts")).toEqual(["tree/low.ts", "tree/mid.ts"]);
    expect(importCycles(graph)).toEqual([]);
  });
});

/**
 * The sandbox stands in for the service, so it must be its own reading of the spec: a sandbox that
 * validated requests with the client's schemas (or planted what the reports look for by the
 * reports' own names) would agree with the client by construction, and a shape mismatch could never
 * fail a test. This walks the import graph of src/sandbox/ from the source text: every import must
 * stay inside src/sandbox/ or name a package (node builtins, zod, undici, ...).
 */
import { readFileSync, readdirSync } from "node:fs";
import { dirname, join, relative, resolve } from "node:path";
import { fileURLToPath } from "node:url";
import { describe, expect, it } from "vitest";

const root = resolve(dirname(fileURLToPath(import.meta.url)), "../../..");
const sandboxDir = join(root, "src", "sandbox");

/** Every module specifier of a file: static imports and re-exports, and dynamic `import("...")`. */
function specifiers(source: string): string[] {
  const found: string[] = [];
  const patterns = [/\b(?:import|export)\b[^'"`;]*?\bfrom\s*["']([^"']+)["']/g, /\bimport\s*["']([^"']+)["']/g, /\bimport\s*\(\s*["']([^"']+)["']\s*\)/g];
  for (const re of patterns) for (const m of source.matchAll(re)) found.push(m[1] as string);
  return found;
}

function sourceFiles(dir: string): string[] {
  return readdirSync(dir, { withFileTypes: true }).flatMap((e) => (e.isDirectory() ? sourceFiles(join(dir, e.name)) : e.name.endsWith(".ts") ? [join(dir, e.name)] : []));
}

describe("the sandbox is independent of the product", () => {
  it("the scan finds static, re-exported, side-effect and dynamic imports (so an empty result means something)", () => {
    const text = `import { a } from "../../schemas/writes.js";\nimport type { B } from "./b.js";\nexport { c } from "../reports/check-names.js";\nimport "./side.js";\nconst m = await import("../api/client.js");`;
    expect(specifiers(text).sort()).toEqual(["../../schemas/writes.js", "../api/client.js", "../reports/check-names.js", "./b.js", "./side.js"]);
  });

  it("no file of src/sandbox imports from schemas/ or any other part of src/", () => {
    const files = sourceFiles(sandboxDir);
    expect(files.length).toBeGreaterThan(10);
    const outside: string[] = [];
    for (const file of files) {
      for (const spec of specifiers(readFileSync(file, "utf8"))) {
        if (!spec.startsWith(".")) continue; // a package: node builtins, zod, undici, p-limit
        const target = resolve(dirname(file), spec);
        if (!target.startsWith(sandboxDir + "/")) outside.push(`${relative(root, file)} imports ${relative(root, target)}`);
      }
    }
    expect(outside).toEqual([]);
  });
});

describe("the sandbox's own names stay in step with the product's", () => {
  it("each kind of bad data the sandbox plants is a consistency check of the report, and each check has a kind", async () => {
    const { PlantedKinds } = await import("../../../src/sandbox/inconsistencies.js");
    const { CheckNames } = await import("../../../src/reports/check-names.js");
    expect([...PlantedKinds].sort()).toEqual([...CheckNames].sort());
  });
});

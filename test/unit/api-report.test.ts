/**
 * The API report (tools/api-report.ts): the committed api/benefits-sync.api.md is the public
 * surface the sources make, and a change to an export shows in it, as a diff with the command that
 * updates it. The report is made from a package's own sources and package.json `exports`, so a
 * small package in a temp dir shows what it sees.
 */
import { spawnSync } from "node:child_process";
import { mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { dirname, join } from "node:path";
import { fileURLToPath } from "node:url";
import { afterAll, describe, expect, it } from "vitest";
import { apiReport, entryPoints, REPORT, reportDifference } from "../../tools/api-report.js";

const ROOT = join(dirname(fileURLToPath(import.meta.url)), "..", "..");
const dirs: string[] = [];
afterAll(() => {
  for (const d of dirs) rmSync(d, { recursive: true, force: true });
});

function readIfThere(path: string): string | undefined {
  try {
    return readFileSync(path, "utf8");
  } catch {
    return undefined;
  }
}

/** A package with two entry points; `greet` as given. */
function fixturePackage(greet: string, index = 'export { greet } from "./greet.js";\nexport type { Options } from "./greet.js";\n'): string {
  const root = mkdtempSync(join(tmpdir(), "bsync-api-"));
  dirs.push(root);
  mkdirSync(join(root, "src", "extra"), { recursive: true });
  const exports = {
    ".": { types: "./dist/src/index.d.ts", import: "./dist/src/index.js" },
    "./extra": { types: "./dist/src/extra/index.d.ts", import: "./dist/src/extra/index.js" },
    "./package.json": "./package.json",
  };
  writeFileSync(join(root, "package.json"), JSON.stringify({ name: "fixture-pkg", type: "module", exports }));
  writeFileSync(join(root, "src", "index.ts"), index);
  writeFileSync(
    join(root, "src", "greet.ts"),
    `/** Not exported. */\ninterface Hidden { readonly a: string }\nexport interface Options { loud: boolean; hidden?: Hidden }\n${greet}\nexport const internal = 1;\n`,
  );
  writeFileSync(join(root, "src", "extra", "index.ts"), 'export const version = "1.0" as const;\n');
  return root;
}

describe("the API report", () => {
  it(`${REPORT} is the public surface of every entry point as the sources make it`, () => {
    expect(entryPoints(ROOT).map((e) => e.name)).toEqual(["benefits-sync", "benefits-sync/schemas", "benefits-sync/testing"]);
    // dist/ is the build of the sources this session's global setup just made: the declarations as shipped.
    const problem = reportDifference(readIfThere(join(ROOT, REPORT)), apiReport(ROOT, { built: join(ROOT, "dist") }));
    expect(problem, problem).toBeUndefined();
  });

  it("with `built`, reads the declarations the build wrote there (the same report as emitting them), not the sources again", () => {
    const root = fixturePackage("/** Says hello. */\nexport function greet(name: string, o?: Options): string { return name; }");
    writeFileSync(join(root, "tsconfig.json"), JSON.stringify({ compilerOptions: { strict: true, module: "NodeNext", moduleResolution: "NodeNext", target: "ES2022", skipLibCheck: true, declaration: true, rootDir: ".", outDir: "dist" } }));
    const tsc = spawnSync(process.execPath, [join(ROOT, "node_modules", "typescript", "bin", "tsc"), "-p", root], { encoding: "utf8" });
    expect(tsc.status, tsc.stdout).toBe(0);
    const built = join(root, "dist");
    expect(apiReport(root, { built })).toBe(apiReport(root));
    // What it reads is the built folder's: a declaration changed there shows, the sources unchanged.
    const dts = join(built, "src", "greet.d.ts");
    writeFileSync(dts, readFileSync(dts, "utf8").replace("o?: Options): string;", "o?: Options, shout?: boolean): string;"));
    expect(apiReport(root, { built })).toContain("function greet(name: string, o?: Options, shout?: boolean): string;");
    expect(apiReport(root)).not.toContain("shout");
  });

  it("lists each entry point's names with their declarations, sorted, comments out, and the names they use that nothing exports", () => {
    const text = apiReport(fixturePackage("/** Says hello. */\nexport function greet(name: string, o?: Options): string { return name; }"));
    expect(text).toContain(
      [
        "## fixture-pkg",
        "",
        "```ts",
        "// Options",
        "interface Options {",
        "    loud: boolean;",
        "    hidden?: Hidden;",
        "}",
        "",
        "// greet",
        "function greet(name: string, o?: Options): string;",
        "```",
        "",
        "Named in these declarations, exported by no entry point:",
        "",
        "- Hidden (src/greet.ts)",
      ].join("\n"),
    );
    expect(text).toContain('## fixture-pkg/extra\n\n```ts\n// version\nconst version: "1.0";\n```');
    expect(text).not.toContain("internal");
    expect(text).not.toContain("Says hello");
  });

  it("a change to an export is a diff, with the command that updates the report; no change, no difference", () => {
    const before = apiReport(fixturePackage("export function greet(name: string, o?: Options): string { return name; }"));
    const changed = apiReport(fixturePackage("export function greet(name: string, o?: Options, times = 1): string { return name.repeat(times); }"));
    const problem = reportDifference(before, changed);
    expect(problem).toContain(`${REPORT} is not the public surface the sources make`);
    expect(problem).toMatch(/^-function greet\(name: string, o\?: Options\): string;$/m);
    expect(problem).toMatch(/^\+function greet\(name: string, o\?: Options, times\?: number\): string;$/m);
    expect(problem).toContain("run `npm run api:update`");
    // A name newly exported shows too; a change to a body does not.
    const more = apiReport(fixturePackage("export function greet(name: string, o?: Options): string { return name; }", 'export * from "./greet.js";\n'));
    expect(reportDifference(before, more)).toMatch(/^\+const internal = 1;$/m);
    const body = apiReport(fixturePackage("export function greet(name: string, o?: Options): string { return `hi ${name}`; }"));
    expect(reportDifference(before, body)).toBeUndefined();
    expect(reportDifference(undefined, before)).toContain(`${REPORT} is missing`);
  });
});

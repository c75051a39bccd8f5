/**
 * The API report: the package's public surface, written down so that a change to it is seen in
 * review (what API Extractor's report does, made with the TypeScript compiler we already have).
 *
 * For each entry point in package.json `exports` (`benefits-sync`, `benefits-sync/testing`, ...):
 * the declarations the build ships (read from dist/, which `npm run api:update` and the tests'
 * global setup build first; emitted in memory from the sources for a package not built), every exported
 * name with its declaration, comments dropped, printed by the compiler, sorted by name; then the
 * names those declarations use that no entry point exports (a user sees them in the types and
 * cannot import them).
 *
 * `npm run api:update` writes api/benefits-sync.api.md; test/unit/api-report.test.ts fails, with a
 * diff, while the committed report is not the surface the sources make.
 */
import { spawnSync } from "node:child_process";
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { dirname, join, relative, resolve } from "node:path";
import { fileURLToPath } from "node:url";
import ts from "typescript";

export const REPORT = join("api", "benefits-sync.api.md");
export const UPDATE = "npm run api:update";

interface Entry {
  /** How a user imports it: `benefits-sync/testing`. */
  readonly name: string;
  /** Its source file, absolute (`src/testing/index.ts` for `./dist/src/testing/index.d.ts`). */
  readonly source: string;
}

/** The entry points package.json exports, with their sources (by the build's layout: dist/X.d.ts from X.ts). */
export function entryPoints(root: string): Entry[] {
  const pkg = JSON.parse(readFileSync(join(root, "package.json"), "utf8")) as { name: string; exports?: Record<string, string | { types?: string }> };
  const out: Entry[] = [];
  for (const [subpath, target] of Object.entries(pkg.exports ?? {})) {
    const types = typeof target === "string" ? target : target.types;
    if (!types?.endsWith(".d.ts")) continue; // ./package.json
    const source = resolve(root, types.replace(/^\.\/dist\//, "").replace(/\.d\.ts$/, ".ts"));
    out.push({ name: `${pkg.name}${subpath.slice(1)}`, source });
  }
  return out.sort((a, b) => cmp(a.name, b.name));
}

const cmp = (a: string, b: string): number => (a < b ? -1 : a > b ? 1 : 0);

/**
 * The report's text for the package at `root`. With `built`, the declarations are read from that
 * folder, where the build just wrote them (`dist`: `npm run api:update` builds first, and the
 * tests' global setup builds before any test), instead of emitted again in memory from the
 * sources: the same compiler options, the same files, without type-checking the sources twice.
 *
 * @example apiReport(root, { built: join(root, "dist") })
 */
export function apiReport(root: string, opts: { readonly built?: string } = {}): string {
  const entries = entryPoints(root);
  const options = compilerOptions(root);
  const virtual = opts.built ? resolve(opts.built) : join(root, ".api-report");
  const host = opts.built ? libCachingHost(options) : inMemoryHost(options, emitDeclarations(root, entries, virtual), virtual);
  const inVirtual = (e: Entry) => join(virtual, relative(root, e.source)).replace(/\.ts$/, ".d.ts");
  const program = ts.createProgram(entries.map(inVirtual), { ...options, noEmit: true }, host);
  const checker = program.getTypeChecker();
  const printer = ts.createPrinter({ removeComments: true, newLine: ts.NewLineKind.LineFeed });
  const exports = entries.map((e) => {
    const file = program.getSourceFile(inVirtual(e));
    const module = file && checker.getSymbolAtLocation(file);
    if (!module) throw new Error(`${e.name}: no declarations for ${relative(root, e.source)}; does the file exist?`);
    const exported = checker.getExportsOfModule(module).map((s) => ({ name: s.name, target: s.flags & ts.SymbolFlags.Alias ? checker.getAliasedSymbol(s) : s }));
    return exported.sort((a, b) => cmp(a.name, b.name));
  });
  // A name one entry point exports is importable: another entry's declarations may use it.
  const targets = new Set(exports.flat().map((x) => x.target));
  const sections = entries.map((e, i) => {
    const exported = exports[i]!;
    const unexported = new Map<string, string>();
    const body = exported.map(({ name, target }) => {
      const decls = (target.declarations ?? []).map((d) => {
        for (const u of referencedUnexported(checker, d, targets, virtual)) unexported.set(u.name, relative(virtual, u.file).replace(/\.d\.ts$/, ".ts"));
        return printDeclaration(printer, d);
      });
      return `// ${name}\n${decls.join("\n")}\n`;
    });
    const forgotten = [...unexported].sort((a, b) => cmp(a[0], b[0])).map(([n, f]) => `- ${n} (${f})`);
    return [
      `## ${e.name}`,
      "",
      "```ts",
      body.join("\n").trimEnd(),
      "```",
      "",
      "Named in these declarations, exported by no entry point:",
      "",
      ...(forgotten.length ? forgotten : ["(none)"]),
      "",
    ].join("\n");
  });
  const head = [
    "# API report: benefits-sync",
    "",
    `Generated by tools/api-report.ts (\`${UPDATE}\`): do not edit. Each entry point of package.json`,
    "`exports`, every name it exports with its declaration as shipped (comments left out), sorted by",
    "name. A change here is a change to what users import: review it as one.",
    "",
  ];
  return `${[...head, ...sections].join("\n").trimEnd()}\n`;
}

/** A host that serves the declarations `dts` (by absolute path, under `virtual`) as files. */
function inMemoryHost(options: ts.CompilerOptions, dts: ReadonlyMap<string, string>, virtual: string): ts.CompilerHost {
  const host = libCachingHost(options);
  const readFile = host.readFile.bind(host);
  const fileExists = host.fileExists.bind(host);
  const getSourceFile = host.getSourceFile.bind(host);
  const directoryExists = host.directoryExists?.bind(host);
  const dirs = new Set([...dts.keys()].flatMap((f) => ancestors(dirname(f), virtual)));
  host.directoryExists = (d) => dirs.has(resolve(d)) || (directoryExists?.(d) ?? ts.sys.directoryExists(d));
  host.fileExists = (f) => dts.has(resolve(f)) || fileExists(f);
  host.readFile = (f) => dts.get(resolve(f)) ?? readFile(f);
  host.getSourceFile = (f, lang, ...rest) => {
    const text = dts.get(resolve(f));
    return text !== undefined ? ts.createSourceFile(f, text, lang, true) : getSourceFile(f, lang, ...rest);
  };
  return host;
}

/** `dir` and its parents up to `top`. */
function ancestors(dir: string, top: string): string[] {
  const out = [dir];
  while (dir !== top && dirname(dir) !== dir) out.push((dir = dirname(dir)));
  return out;
}

/** Declaration files of installed packages (TypeScript's lib, @types/node), parsed once for every program this process makes. */
const installedFiles = new Map<string, ts.SourceFile | undefined>();

/**
 * A compiler host that parses an installed package's file once: each report makes two programs,
 * and the tests make several, and parsing TypeScript's lib and @types/node was most of each.
 */
function libCachingHost(options: ts.CompilerOptions): ts.CompilerHost {
  const host = ts.createCompilerHost(options);
  const parse = host.getSourceFile.bind(host);
  host.getSourceFile = (fileName, languageVersion, ...rest) => {
    if (!fileName.includes("/node_modules/")) return parse(fileName, languageVersion, ...rest);
    const key = `${fileName}\0${JSON.stringify(languageVersion)}`;
    if (!installedFiles.has(key)) installedFiles.set(key, parse(fileName, languageVersion, ...rest));
    return installedFiles.get(key);
  };
  return host;
}

function compilerOptions(root: string): ts.CompilerOptions {
  const file = join(root, "tsconfig.json");
  const parsed = ts.readConfigFile(file, ts.sys.readFile);
  const base = parsed.error ? { compilerOptions: { strict: true, module: "NodeNext", moduleResolution: "NodeNext", target: "ES2022", skipLibCheck: true } } : parsed.config;
  return ts.parseJsonConfigFileContent({ ...base, include: [], files: [] }, ts.sys, root).options;
}

/** The declarations a build would write for the entries and everything they import, in memory, by absolute path. */
function emitDeclarations(root: string, entries: readonly Entry[], outDir: string): Map<string, string> {
  const options: ts.CompilerOptions = {
    ...compilerOptions(root),
    declaration: true,
    emitDeclarationOnly: true,
    noEmit: false,
    sourceMap: false,
    declarationMap: false,
    incremental: false,
    rootDir: root,
    outDir,
  };
  const program = ts.createProgram(entries.map((e) => e.source), options, libCachingHost(options));
  const out = new Map<string, string>();
  const result = program.emit(undefined, (name, text) => out.set(resolve(name), text), undefined, true);
  const errors = result.diagnostics.filter((d) => d.category === ts.DiagnosticCategory.Error);
  if (errors.length) throw new Error(`declarations could not be emitted:\n${ts.formatDiagnostics(errors, { getCanonicalFileName: (f) => f, getCurrentDirectory: () => root, getNewLine: () => "\n" })}`);
  return out;
}

/** A declaration as a user reads it: no `export`/`declare`, no comments, a variable with its keyword. */
function printDeclaration(printer: ts.Printer, d: ts.Declaration): string {
  const file = d.getSourceFile();
  let text = printer.printNode(ts.EmitHint.Unspecified, d, file);
  if (ts.isVariableDeclaration(d)) {
    const list = d.parent;
    text = `${list.flags & ts.NodeFlags.Const ? "const" : list.flags & ts.NodeFlags.Let ? "let" : "var"} ${text};`;
  }
  return text.replace(/^(export )?(default )?(declare )?/, "");
}

/** The names a declaration uses, from our own declarations, that are not among `exported`. */
function referencedUnexported(checker: ts.TypeChecker, d: ts.Declaration, exported: ReadonlySet<ts.Symbol>, virtual: string): { name: string; file: string }[] {
  const out: { name: string; file: string }[] = [];
  const visit = (n: ts.Node): void => {
    const ref = ts.isTypeReferenceNode(n) ? n.typeName : ts.isExpressionWithTypeArguments(n) ? n.expression : ts.isTypeQueryNode(n) ? n.exprName : undefined;
    if (ref) {
      let s = checker.getSymbolAtLocation(ts.isQualifiedName(ref) ? ref.right : ref);
      if (s && s.flags & ts.SymbolFlags.Alias) s = checker.getAliasedSymbol(s);
      const at = s?.declarations?.[0]?.getSourceFile().fileName;
      if (s && at && resolve(at).startsWith(virtual) && !exported.has(s) && !(s.flags & ts.SymbolFlags.TypeParameter)) out.push({ name: s.name, file: resolve(at) });
    }
    ts.forEachChild(n, visit);
  };
  visit(d);
  return out;
}

/**
 * Undefined when `committed` is `fresh`; else what differs (a unified diff) and how to update it.
 */
export function reportDifference(committed: string | undefined, fresh: string): string | undefined {
  if (committed === fresh) return undefined;
  const how = `If the change to the public surface is meant, run \`${UPDATE}\` and commit ${REPORT} with it; if not, undo the change to the exports.`;
  if (committed === undefined) return `${REPORT} is missing. ${how}`;
  const dir = mkdtempSync(join(tmpdir(), "api-report-"));
  try {
    writeFileSync(join(dir, "committed"), committed);
    writeFileSync(join(dir, "from-the-sources"), fresh);
    const diff = spawnSync("diff", ["-u", "committed", "from-the-sources"], { cwd: dir, encoding: "utf8" });
    const text = diff.stdout || `(no diff tool: the first difference is at line ${firstDifference(committed, fresh)})`;
    return `${REPORT} is not the public surface the sources make:\n${text}\n${how}`;
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
}

function firstDifference(a: string, b: string): number {
  const x = a.split("\n");
  const y = b.split("\n");
  let i = 0;
  while (i < x.length && x[i] === y[i]) i++;
  return i + 1;
}

// `node dist/tools/api-report.js [--check]`: write the report (or, with --check, say how it differs).
if (process.argv[1] && resolve(process.argv[1]) === fileURLToPath(import.meta.url)) {
  const root = resolve(dirname(fileURLToPath(import.meta.url)), "..", "..");
  // `npm run api:update` builds first: the declarations are the ones in dist/.
  const fresh = apiReport(root, { built: join(root, "dist") });
  const path = join(root, REPORT);
  if (process.argv.includes("--check")) {
    let committed: string | undefined;
    try {
      committed = readFileSync(path, "utf8");
    } catch {
      committed = undefined;
    }
    const problem = reportDifference(committed, fresh);
    if (problem) {
      process.stderr.write(`${problem}\n`);
      process.exitCode = 1;
    }
  } else {
    writeFileSync(path, fresh);
    process.stdout.write(`wrote ${REPORT}\n`);
  }
}

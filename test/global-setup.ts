import { execFileSync } from "node:child_process";
import { existsSync, readdirSync, rmSync } from "node:fs";
import { join, relative } from "node:path";
import { fileURLToPath } from "node:url";

const root = fileURLToPath(new URL("..", import.meta.url));
const dist = join(root, "dist");
/** The folders tsconfig.build.json compiles, each to dist/<folder>. */
const BUILT = ["schemas", "src", "jobs", "bench", "tools"];

function files(dir: string): string[] {
  if (!existsSync(dir)) return [];
  return readdirSync(dir, { withFileTypes: true }).flatMap((e) => (e.isDirectory() ? files(join(dir, e.name)) : [join(dir, e.name)]));
}

/** The source a file of dist/ was built from (`dist/src/a.js.map` from `src/a.ts`). */
const sourceOf = (out: string) => join(root, relative(dist, out).replace(/(\.d)?\.ts\.map$|\.js\.map$|\.d\.ts$|\.js$/, ".ts"));

function build(): void {
  execFileSync(process.execPath, [join(root, "node_modules", "typescript", "bin", "tsc"), "-p", "tsconfig.build.json"], {
    cwd: root,
    stdio: "inherit",
  });
}

/**
 * The e2e tests run the built CLI (`dist/`), as a user would: build it once per test session so
 * that they never test a stale build. The build is incremental (tsconfig.build.json keeps its state
 * in dist/.tsbuildinfo, so that `npm run build` records what it wrote too and a later incremental
 * build does not trust a record older than the folder):
 * an unchanged tree takes a second or two, not the ten of a full build. What an incremental build
 * does not do is done here: a module renamed or removed in src must not live on in dist for a test
 * to load (its outputs are removed), and a dist/ that lost an output since (removed by hand) is
 * built again from nothing (tsc believes its record, not the folder).
 */
export default function setup(): void {
  build();
  const outputs = BUILT.flatMap((d) => files(join(dist, d)));
  for (const out of outputs) if (!existsSync(sourceOf(out))) rmSync(out);
  const sources = BUILT.flatMap((d) => files(join(root, d))).filter((f) => f.endsWith(".ts") && !f.endsWith(".d.ts"));
  const missing = sources.filter((s) => !existsSync(join(dist, relative(root, s)).replace(/\.ts$/, ".js")));
  if (missing.length > 0) {
    rmSync(dist, { recursive: true, force: true });
    build();
  }
}

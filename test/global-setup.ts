import { execFileSync } from "node:child_process";
import { rmSync } from "node:fs";
import { dirname, join } from "node:path";
import { fileURLToPath } from "node:url";

/**
 * The e2e tests run the built CLI (`dist/`), as a user would: build it once per test session so
 * that they never test a stale build. The old build goes first: a module renamed or removed in
 * src must not live on in dist for a test to load.
 */
export default function setup(): void {
  const root = join(dirname(fileURLToPath(import.meta.url)), "..");
  rmSync(join(root, "dist"), { recursive: true, force: true });
  execFileSync(process.execPath, [join(root, "node_modules", "typescript", "bin", "tsc"), "-p", "tsconfig.build.json"], {
    cwd: root,
    stdio: "inherit",
  });
}

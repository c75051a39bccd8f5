/**
 * Where a worker thread's script is. Built, it sits beside the module that starts it. Under the
 * test runner that module runs from its TypeScript source, which a worker thread cannot load, so
 * the build made by the test setup is used instead.
 */
import { existsSync } from "node:fs";
import { dirname, join, relative } from "node:path";
import { fileURLToPath } from "node:url";

/**
 * @example workerScript(import.meta.url, "./snapshot-worker.js") // file URL of the built script
 */
export function workerScript(fromModule: string, script: string): URL {
  const here = new URL(script, fromModule);
  if (existsSync(fileURLToPath(here))) return here;
  const root = join(dirname(fileURLToPath(import.meta.url)), "..");
  const built = join(root, "dist", "src", relative(join(root, "src"), fileURLToPath(here)));
  if (!existsSync(built)) throw new Error(`a worker script is not built: run \`npm run build\` (looked for ${built})`);
  return new URL(`file://${built}`);
}

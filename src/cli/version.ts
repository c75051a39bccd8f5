/** The package's version, read from package.json wherever the code runs from (src/ or dist/src/). */
import { readFileSync } from "node:fs";
import { dirname, join } from "node:path";
import { fileURLToPath } from "node:url";

/** @example packageVersion() // "0.1.0" */
export function packageVersion(): string {
  let dir = dirname(fileURLToPath(import.meta.url));
  for (let i = 0; i < 6; i++) {
    try {
      const pkg = JSON.parse(readFileSync(join(dir, "package.json"), "utf8")) as { name?: string; version?: string };
      if (pkg.name === "benefits-sync" && pkg.version) return pkg.version;
    } catch {
      // no package.json at this level: keep walking up
    }
    dir = dirname(dir);
  }
  return "0.0.0-unknown";
}

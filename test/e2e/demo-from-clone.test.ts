/**
 * `npm run demo` runs from the clone, before anything is installed: the hint it prints for the
 * next command must run there as printed, with no `benefits-sync` on the PATH and nothing fetched
 * from a registry. The script's build step is the suite's global setup (a second build here would
 * rewrite dist/ under the other test files), so the test runs the script's command after `&&`.
 */
import { spawnSync } from "node:child_process";
import { mkdtempSync, readFileSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { dirname, join } from "node:path";
import { fileURLToPath } from "node:url";
import { afterAll, beforeAll, describe, expect, it } from "vitest";

const ROOT = fileURLToPath(new URL("../..", import.meta.url));
let dir: string;
beforeAll(() => {
  dir = mkdtempSync(join(tmpdir(), "bsync-demo-clone-"));
});
afterAll(() => rmSync(dir, { recursive: true, force: true }));

/** A shell in the clone whose PATH has node and the system's tools, and no installed benefits-sync. */
function sh(line: string): { code: number | null; stdout: string; stderr: string } {
  const env = { PATH: `${dirname(process.execPath)}:/usr/bin:/bin`, HOME: dir, npm_config_offline: "true" };
  const r = spawnSync("sh", ["-c", line], { cwd: ROOT, env, encoding: "utf8" });
  return { code: r.status, stdout: r.stdout, stderr: r.stderr };
}

describe("npm run demo, from the clone", () => {
  it("prints a `runs` hint that runs as printed where the user is, with nothing installed", { timeout: 300_000 }, () => {
    expect(sh("command -v benefits-sync").code, "no benefits-sync on this PATH").not.toBe(0);
    const script = (JSON.parse(readFileSync(join(ROOT, "package.json"), "utf8")) as { scripts: Record<string, string> }).scripts.demo!;
    const [build, demo] = script.split(" && ");
    expect(build).toBe("npm run build");
    const d = sh(`${demo} --out ${join(dir, "demo")}`);
    expect(d.code, d.stderr).toBe(0);
    const hint = d.stdout.split("\n").find((l) => /^\s+BENEFITS_DB=\S+ .* runs$/.test(l));
    expect(hint, d.stdout).toBeDefined();
    const runs = sh(hint!.trim());
    expect(runs.code, `${hint}\n${runs.stderr}`).toBe(0);
    expect(runs.stdout).toMatch(/succeeded/);
  });
});

/**
 * The real binary in a child process: shebang, entry-point detection through a bin symlink, exit
 * statuses as the shell sees them. Compiles src/cli/main.ts (and what it imports) into a temporary
 * directory inside the project, so node resolves node_modules and package.json as it would in dist/.
 */
import { execFile, spawn, spawnSync } from "node:child_process";
import { chmodSync, existsSync, mkdirSync, mkdtempSync, readFileSync, rmSync, symlinkSync, writeFileSync } from "node:fs";
import path from "node:path";
import { fileURLToPath } from "node:url";
import { promisify } from "node:util";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { NodeFlags } from "../../src/cli/node-flags.js";

const root = fileURLToPath(new URL("../..", import.meta.url));
const pkg = JSON.parse(readFileSync(path.join(root, "package.json"), "utf8")) as { version: string; bin: Record<string, string> };
let outDir: string;
let bin: string;

beforeAll(() => {
  const cache = path.join(root, "node_modules", ".cache");
  mkdirSync(cache, { recursive: true });
  outDir = mkdtempSync(path.join(cache, "bs-e2e-"));
  // Type errors in files other helpers are still writing must not stop the emit: check the output exists instead.
  spawnSync(
    process.execPath,
    [
      path.join(root, "node_modules", "typescript", "bin", "tsc"),
      ...["--outDir", outDir, "--rootDir", root, "--module", "NodeNext", "--moduleResolution", "NodeNext"],
      ...["--target", "ES2022", "--skipLibCheck", "--types", "node", "--sourceMap", "false", "--declaration", "false"],
      path.join(root, "src", "cli", "main.ts"),
    ],
    { cwd: root, encoding: "utf8" },
  );
  const main = path.join(outDir, "src", "cli", "main.js");
  expect(existsSync(main)).toBe(true);
  chmodSync(main, 0o755);
  // As npm installs it: a symlink named after the bin, pointing at the compiled main.js.
  bin = path.join(outDir, "benefits-sync");
  symlinkSync(main, bin);
});
afterAll(() => rmSync(outDir, { recursive: true, force: true }));

const run = async (args: string[], env: Record<string, string> = {}) => {
  try {
    const { stdout, stderr } = await promisify(execFile)(bin, args, { cwd: outDir, env: { PATH: process.env.PATH ?? "", ...env } });
    return { code: 0, stdout, stderr };
  } catch (err) {
    const e = err as { code: number; stdout: string; stderr: string };
    return { code: e.code, stdout: e.stdout, stderr: e.stderr };
  }
};

describe("benefits-sync binary", () => {
  it("package.json's bin points at dist/src/cli/main.js", () => {
    expect(pkg.bin["benefits-sync"]).toBe("dist/src/cli/main.js");
  });

  it("--version through the bin symlink prints the version and exits 0", async () => {
    const r = await run(["--version"]);
    expect(r).toMatchObject({ code: 0, stderr: "" });
    expect(r.stdout.trim()).toBe(pkg.version);
  });

  it("run as a command, main.js starts node with the CLI's flags (NodeFlags), in the same process", async () => {
    const child = spawn(bin, ["sandbox", "--port", "0", "--members", "5"], { cwd: outDir, env: { PATH: process.env.PATH ?? "" } });
    try {
      let out = "";
      for await (const chunk of child.stdout) if ((out += String(chunk)).includes("Sandbox listening")) break;
      // The process the bin started is node itself (`exec`), its arguments the flags, then the bin.
      const argv = readFileSync(`/proc/${child.pid}/cmdline`, "utf8").split("\0").filter(Boolean);
      expect(path.basename(argv[0]!)).toBe("node");
      expect(argv.slice(1)).toEqual([...NodeFlags, bin, "sandbox", "--port", "0", "--members", "5"]);
    } finally {
      child.kill();
    }
  });

  it("--help exits 0 and lists the commands", async () => {
    const r = await run(["--help"]);
    expect(r.code).toBe(0);
    for (const name of ["doctor", "sync", "runs", "demo", "sandbox"]) expect(r.stdout).toMatch(new RegExp(`^  ${name}\\b`, "m"));
  });

  it("an unknown command exits 2", async () => {
    const r = await run(["nope"]);
    expect(r.code).toBe(2);
    expect(r.stderr).toContain("unknown command 'nope'");
  });

  it("an invalid config file exits 2 naming the key, without the API key", async () => {
    writeFileSync(path.join(outDir, "benefits-sync.config.json"), JSON.stringify({ http: { retry: { capMs: -1 } } }));
    const r = await run(["doctor"], { BENEFITS_API_KEY: "e2e-secret-key-123" });
    rmSync(path.join(outDir, "benefits-sync.config.json"));
    expect(r.code).toBe(2);
    expect(r.stderr).toContain("http.retry.capMs: expected an integer >= 0, got -1 (from the config file benefits-sync.config.json)");
    expect(r.stderr).not.toContain("e2e-secret-key-123");
  });
});

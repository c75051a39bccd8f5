/**
 * The package as a user gets it: `npm pack` into a temporary folder (never into the clone), the
 * tarball unpacked as `node_modules/benefits-sync` of a temporary project, and that project's
 * other `node_modules` entries linked to this repository's installed ones (the package's
 * dependencies, TypeScript, @types/node): no registry is asked. Nothing of `src/` is reachable from
 * the project except through the tarball's `dist/`.
 *
 * The tarball is packed with `--ignore-scripts`: its `prepack` would rebuild `dist/`, which the
 * suite's global setup has just built from the same sources (a second build costs half a minute).
 */
import { execFileSync, spawn, type ChildProcess } from "node:child_process";
import { mkdirSync, readdirSync, realpathSync, symlinkSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { fileURLToPath } from "node:url";

const root = fileURLToPath(new URL("../..", import.meta.url));

export interface PackedProject {
  /** The project folder: `node_modules/benefits-sync` is the unpacked tarball. */
  readonly dir: string;
  /** The tarball's file names (`package/...`). */
  readonly files: readonly string[];
}

/** Pack this repository into `tmp` and make a project beside the tarball that depends on it. */
export function packedProject(tmp: string): PackedProject {
  const packed = JSON.parse(execFileSync("npm", ["pack", "--ignore-scripts", "--json", "--pack-destination", tmp], { cwd: root, encoding: "utf8", stdio: ["ignore", "pipe", "pipe"] })) as { filename: string }[];
  const tarball = join(tmp, packed[0]!.filename);
  const dir = join(tmp, "project");
  const installed = join(dir, "node_modules", "benefits-sync");
  mkdirSync(installed, { recursive: true });
  execFileSync("tar", ["-xzf", tarball, "-C", installed, "--strip-components=1"]);
  const files = execFileSync("tar", ["-tzf", tarball], { encoding: "utf8" }).split("\n").filter(Boolean);
  linkDependencies(join(root, "node_modules"), join(dir, "node_modules"));
  writeFileSync(join(dir, "package.json"), JSON.stringify({ name: "uses-benefits-sync", private: true, type: "module", dependencies: { "benefits-sync": `file:${tarball}` } }, null, 2));
  return { dir, files };
}

/** Link every installed package (scoped ones one by one) but this one, which the tarball provides. */
function linkDependencies(from: string, to: string): void {
  for (const name of readdirSync(from)) {
    if (name === "benefits-sync" || name.startsWith(".")) continue;
    if (name.startsWith("@")) {
      mkdirSync(join(to, name), { recursive: true });
      for (const pkg of readdirSync(join(from, name))) symlinkSync(realpathSync(join(from, name, pkg)), join(to, name, pkg));
    } else symlinkSync(realpathSync(join(from, name)), join(to, name));
  }
}

export interface Finished {
  readonly code: number | null;
  readonly stdout: string;
  readonly stderr: string;
}

export interface Running {
  readonly child: ChildProcess;
  /** What it has printed so far. */
  stdout(): string;
  readonly done: Promise<Finished>;
}

/**
 * Start `node FILE ARGS` in `cwd` with only PATH and `env`, without blocking this process (a
 * sandbox in it must keep answering).
 */
export function startNode(file: string, args: readonly string[], env: Record<string, string>, cwd: string): Running {
  const child = spawn(process.execPath, [file, ...args], { cwd, env: { PATH: process.env.PATH ?? "", ...env }, stdio: ["ignore", "pipe", "pipe"] });
  let stdout = "";
  let stderr = "";
  child.stdout!.on("data", (d: Buffer) => (stdout += d.toString()));
  child.stderr!.on("data", (d: Buffer) => (stderr += d.toString()));
  const done = new Promise<Finished>((resolve) => child.once("close", (code) => resolve({ code, stdout, stderr })));
  return { child, stdout: () => stdout, done };
}

/** {@link startNode}, to its end. */
export const runNode = (file: string, args: readonly string[], env: Record<string, string>, cwd: string): Promise<Finished> => startNode(file, args, env, cwd).done;

/**
 * The README's install, run as printed: a clone (this repository's tracked files, with its
 * installed node_modules, as `npm ci` leaves it) packs itself and installs the tarball into a
 * temporary npm prefix; then `benefits-sync --help` and `benefits-sync demo` run from another
 * folder with only that prefix's bin added to the PATH. The link install from the clone too. No
 * dist/ is copied: the tarball's must come from the package's own build at pack time (prepack).
 *
 * better-sqlite3 is native: its install fetches a prebuilt binary from GitHub, which this
 * workplace cannot reach, and compiling SQLite again takes minutes. The repository's own compiled
 * binary is handed to it as that prebuilt file (its `local_prebuilds` setting), so the install is
 * the one a user with a prebuilt gets; if the registry resolves another better-sqlite3 version,
 * the install compiles it, slower but the same test.
 *
 * The Dockerfile, without docker (this machine has none): its build line's steps before `docker
 * build`, then each instruction in order, the image's root a temporary folder and npm's global
 * prefix standing for the image's. An instruction or a RUN command this test does not know fails it.
 */
import { execFileSync, spawnSync } from "node:child_process";
import { chmodSync, copyFileSync, existsSync, lstatSync, mkdirSync, mkdtempSync, readdirSync, readFileSync, realpathSync, rmSync, symlinkSync } from "node:fs";
import { tmpdir } from "node:os";
import { delimiter, dirname, join } from "node:path";
import { fileURLToPath } from "node:url";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { envPairs, globRegExp, parseDockerfile } from "../helpers/dockerfile.js";
import { readmeBlock } from "../helpers/readme-blocks.js";

const root = fileURLToPath(new URL("../..", import.meta.url));
const pkg = JSON.parse(readFileSync(join(root, "package.json"), "utf8")) as { name: string; version: string };
let tmp: string;
let clone: string;

/** The environment a user's shell would give npm: ours without npm's own run-script variables. */
function userEnv(extra: Record<string, string>): Record<string, string> {
  const env: Record<string, string> = {};
  for (const [k, v] of Object.entries(process.env)) if (v !== undefined && !/^npm_/i.test(k)) env[k] = v;
  return { ...env, npm_config_update_notifier: "false", npm_config_fund: "false", npm_config_audit: "false", ...extra };
}

/** npm settings of the test's own: a temporary global prefix, the npm cache first, the prebuilt binary. */
function npmEnv(prefix: string): Record<string, string> {
  return userEnv({ npm_config_prefix: prefix, npm_config_prefer_offline: "true", npm_config_better_sqlite3_local_prebuilds: join(tmp, "prebuilds") });
}

/** One README line through `sh -c`, as pasted into a shell. */
function sh(line: string, cwd: string, env: Record<string, string>) {
  const r = spawnSync("sh", ["-c", line], { cwd, env, encoding: "utf8", maxBuffer: 64 * 1024 * 1024 });
  return { code: r.status, stdout: r.stdout, stderr: r.stderr };
}

/** A PATH with `bin` first and nothing of this repository (its node_modules/.bin included). */
function pathWith(bin: string): string {
  const rest = (process.env.PATH ?? "").split(delimiter).filter((p) => p && !p.startsWith(root) && !p.includes("node_modules"));
  return [bin, ...rest].join(delimiter);
}

/** What a clone holds: the tracked files (and new ones not ignored), no dist/, node_modules as installed. */
function makeClone(dir: string): void {
  const files = execFileSync("git", ["ls-files", "-z", "--cached", "--others", "--exclude-standard"], { cwd: root, encoding: "utf8" }).split("\0").filter(Boolean);
  for (const f of files) {
    if (!existsSync(join(root, f))) continue; // deleted in the work tree, not yet committed
    mkdirSync(dirname(join(dir, f)), { recursive: true });
    copyFileSync(join(root, f), join(dir, f));
  }
  symlinkSync(realpathSync(join(root, "node_modules")), join(dir, "node_modules"));
}

/** The repository's compiled better-sqlite3, packed as the prebuilt file its install looks for. */
function makePrebuild(dir: string): void {
  mkdirSync(dir, { recursive: true });
  const bs = join(root, "node_modules", "better-sqlite3");
  const version = (JSON.parse(readFileSync(join(bs, "package.json"), "utf8")) as { version: string }).version;
  if (!existsSync(join(bs, "build", "Release", "better_sqlite3.node"))) return; // nothing to hand over: the install compiles
  const name = `better-sqlite3-v${version}-node-v${process.versions.modules}-${process.platform}-${process.arch}.tar.gz`;
  execFileSync("tar", ["-czf", join(dir, name), "-C", bs, "build/Release/better_sqlite3.node"]);
}

beforeAll(() => {
  tmp = mkdtempSync(join(tmpdir(), "bs-install-"));
  clone = join(tmp, "clone");
  makeClone(clone);
  makePrebuild(join(tmp, "prebuilds"));
  mkdirSync(join(tmp, "elsewhere"));
}, 600_000);
afterAll(() => rmSync(tmp, { recursive: true, force: true }));

describe("install from a clone, as the README prints it", () => {
  it("a copy: `npm pack` builds the tarball, `npm install -g` it, then --help and demo run from another folder", () => {
    const prefix = join(tmp, "prefix-copy");
    for (const line of readmeBlock("install: a copy, from a clone")) {
      const r = sh(line, clone, npmEnv(prefix));
      expect(r.code, `${line}\n${r.stderr}`).toBe(0);
    }

    // The tarball carries the built CLI, not sources, tests, benchmarks or source maps.
    const tarball = readdirSync(clone).find((f) => f.endsWith(".tgz"));
    expect(tarball).toBe(`${pkg.name}-${pkg.version}.tgz`);
    const listed = execFileSync("tar", ["-tzf", join(clone, tarball!)], { encoding: "utf8" }).split("\n").filter(Boolean);
    expect(listed).toEqual(expect.arrayContaining(["package/package.json", "package/README.md", "package/dist/src/cli/main.js", "package/dist/src/store/snapshot-worker.js", "package/dist/jobs/index.js", "package/dist/schemas/index.js"]));
    expect(listed.filter((f) => !/^package\/(dist\/(src|jobs|schemas)\/.*\.(js|d\.ts)|package\.json|README\.md)$/.test(f))).toEqual([]);

    // A copy, not a link to the clone.
    const installed = join(prefix, "lib", "node_modules", pkg.name);
    expect(lstatSync(installed).isSymbolicLink()).toBe(false);

    // The tarball stays in the clone, where git sees it (nothing ignores it), until the README's line removes it.
    expect(spawnSync("git", ["check-ignore", "-q", tarball!], { cwd: root }).status).toBe(1);
    for (const line of readmeBlock("install: the tarball left in the clone")) {
      const r = sh(line, clone, npmEnv(prefix));
      expect(r.code, `${line}\n${r.stderr}`).toBe(0);
    }
    expect(readdirSync(clone).filter((f) => f.endsWith(".tgz"))).toEqual([]);

    const env = userEnv({ PATH: pathWith(join(prefix, "bin")) });
    const here = join(tmp, "elsewhere");
    const [help, demo, ...more] = readmeBlock("install: check, from any folder");
    expect([help, demo, more]).toEqual(["benefits-sync --help", "benefits-sync demo", []]);
    expect(sh("command -v benefits-sync", here, env).stdout.trim()).toBe(join(prefix, "bin", "benefits-sync"));

    const h = sh(help!, here, env);
    expect(h.code, h.stderr).toBe(0);
    expect(h.stdout).toMatch(/^Usage: benefits-sync \[options\] \[command\]/);

    const d = sh(demo!, here, env);
    expect(d.code, d.stderr).toBe(0);
    expect(d.stdout).toContain("The recorded changes equal the sandbox's own record of the day, exactly.");
    expect(d.stdout.trim().split("\n").at(-1)).toBe(`Report: ${join("benefits-sync-demo", "report", "report.html")}`);
    expect(existsSync(join(here, "benefits-sync-demo", "report", "report.html"))).toBe(true);

    // The demo's hints name the installed command (npx here would ask the public registry), and run as printed.
    expect(d.stdout).not.toContain("npx");
    const hint = d.stdout.split("\n").find((l) => /^\s+BENEFITS_DB=\S+ benefits-sync runs$/.test(l));
    expect(hint, d.stdout).toBeDefined();
    const runs = sh(hint!.trim(), here, env);
    expect(runs.code, runs.stderr).toBe(0);
    expect(runs.stdout).toMatch(/succeeded/);
  }, 900_000);

  it("a link: `npm run build` then `npm install -g .` puts the clone's bin on the PATH", () => {
    const prefix = join(tmp, "prefix-link");
    rmSync(join(clone, "dist"), { recursive: true, force: true });
    for (const line of readmeBlock("install: a link, from a clone")) {
      const r = sh(line, clone, npmEnv(prefix));
      expect(r.code, `${line}\n${r.stderr}`).toBe(0);
    }
    expect(realpathSync(join(prefix, "lib", "node_modules", pkg.name))).toBe(realpathSync(clone));
    const v = sh("benefits-sync --version", join(tmp, "elsewhere"), userEnv({ PATH: pathWith(join(prefix, "bin")) }));
    expect(v).toMatchObject({ code: 0, stdout: `${pkg.version}\n` });
  }, 600_000);
});

describe("the Dockerfile's instructions, performed in order without docker", () => {
  it("packs, copies the tarball, installs it with `npm install -g`, and the ENTRYPOINT runs as the image's user would", () => {
    const text = readFileSync(join(root, "Dockerfile"), "utf8");
    const image = join(tmp, "image"); // the image's root file system
    const prefix = join(tmp, "prefix-image"); // the image's npm global prefix (/usr/local)
    const at = (p: string) => join(image, p);
    const mapped = (cmd: string) => cmd.replace(/(^|\s)(\/(?:tmp|var)(?:\/\S*)?)/g, (_, sp: string, p: string) => `${sp}${at(p)}`);
    mkdirSync(at("tmp"), { recursive: true });

    // The build line: the steps before `docker build`, in the clone (its node_modules as `npm ci` left them).
    const build = /^#\s+(npm ci && .*&& docker build .*)$/m.exec(text)?.[1];
    expect(build, "the Dockerfile says how to build it").toBeDefined();
    for (const step of build!.split(" && ").map((x) => x.trim())) {
      if (step === "npm ci" || step.startsWith("docker build ")) continue;
      expect(step).toBe("npm pack");
      const r = sh(step, clone, npmEnv(prefix));
      expect(r.code, r.stderr).toBe(0);
    }

    let env: Record<string, string> = {};
    let cwd = "/";
    let owner: string | undefined;
    let user: string | undefined;
    let volume: string | undefined;
    let entrypoint: string[] = [];
    let cmd: string[] = [];
    for (const { op, args } of parseDockerfile(text)) {
      if (op === "FROM") {
        const major = /^node:(\d+)-slim$/.exec(args)?.[1];
        expect(major, args).toBe(process.versions.node.split(".")[0]);
      } else if (op === "ENV") env = { ...env, ...Object.fromEntries(envPairs(args)) };
      else if (op === "COPY") {
        const [src, dest, ...more] = args.split(/\s+/);
        expect(more).toEqual([]);
        const found = readdirSync(clone).filter((f) => globRegExp(src!).test(f));
        expect(found, "the COPY takes the tarball `npm pack` left, and nothing else").toEqual([`${pkg.name}-${pkg.version}.tgz`]);
        expect(dest!.endsWith("/")).toBe(true);
        copyFileSync(join(clone, found[0]!), join(at(dest!), found[0]!));
      } else if (op === "RUN") {
        for (const command of args.split(" && ").map((x) => x.trim())) {
          const [program, ...rest] = command.split(/\s+/);
          if (program === "groupadd" || program === "useradd") {
            // Needs root: checked, not run. The user is the one USER names.
            const id = (flag: string) => rest[rest.indexOf(flag) + 1];
            if (program === "useradd") owner = `${id("--uid")}:${id("--gid")}`;
            expect(rest).toContain("--system");
          } else if (program === "chown") {
            expect(rest[0], "the folder belongs to the user created").toBe(owner);
          } else if (program === "npm") {
            expect(rest.slice(0, 2), command).toEqual(["install", "-g"]);
            const r = sh(mapped(command), at(cwd), { ...npmEnv(prefix), ...env });
            expect(r.code, `${command}\n${r.stderr}`).toBe(0);
          } else if (program === "rm" || program === "mkdir" || program === "chmod") {
            const r = sh(mapped(command), at(cwd), userEnv({}));
            expect(r.code, `${command}\n${r.stderr}`).toBe(0);
          } else throw new Error(`the Dockerfile runs \`${command}\`, which this test does not perform: teach it`);
        }
      } else if (op === "WORKDIR") {
        cwd = args;
        mkdirSync(at(cwd), { recursive: true });
      } else if (op === "VOLUME") volume = args;
      else if (op === "USER") user = args;
      else if (op === "ENTRYPOINT") entrypoint = JSON.parse(args) as string[];
      else if (op === "CMD") cmd = JSON.parse(args) as string[];
      else throw new Error(`the Dockerfile's ${op} is not an instruction this test performs: teach it`);
    }

    // The tarball is installed as a copy and removed from the image; the user is not root and owns the volume, the snapshot's folder.
    expect(lstatSync(join(prefix, "lib", "node_modules", pkg.name)).isSymbolicLink()).toBe(false);
    expect(readdirSync(at("tmp")).filter((f) => f.endsWith(".tgz"))).toEqual([]);
    expect(user).toBe(owner);
    expect(Number(user!.split(":")[0])).toBeGreaterThan(0);
    expect(volume).toBe(cwd);
    expect(dirname(env.BENEFITS_DB ?? "")).toBe(volume);

    // `docker run IMAGE` and `docker run IMAGE --version`: the ENTRYPOINT found on the PATH, in the WORKDIR.
    expect(entrypoint).toEqual(["benefits-sync"]);
    chmodSync(at(cwd), 0o700);
    const runEnv = userEnv({ ...env, BENEFITS_DB: mapped(env.BENEFITS_DB!), PATH: pathWith(join(prefix, "bin")) });
    const run = (args: string[]) => spawnSync(entrypoint[0]!, [...entrypoint.slice(1), ...args], { cwd: at(cwd), env: runEnv, encoding: "utf8" });
    const help = run(cmd);
    expect(help.status, help.stderr).toBe(0);
    expect(help.stdout).toMatch(/^Usage: benefits-sync \[options\] \[command\]/);
    expect(run(["--version"])).toMatchObject({ status: 0, stdout: `${pkg.version}\n` });
    rmSync(join(clone, `${pkg.name}-${pkg.version}.tgz`), { force: true });
  }, 900_000);
});

/**
 * `benefits-sync init` and `config check` with the built CLI, as a new user runs them: the file
 * init writes loads with the config loader as it is, carries comments and never the key, is never
 * written over, and ends with doctor's checks (or says what is left before they can run). The
 * README's set-up commands run here exactly as printed.
 */
import { existsSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { createServer } from "node:net";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { loadConfig } from "../../src/config/index.js";
import { startSandbox, type Sandbox } from "../../src/sandbox/index.js";
import { startCli } from "../helpers/cli-process.js";

let sb: Sandbox;
let dir: string;
const README = fileURLToPath(new URL("../../README.md", import.meta.url));
// The jobs as their files declare them (jobs/*.ts), typed here again on purpose.
const DECLARED_JOBS = {
  "nightly-claims-export": "0 2 * * *",
  "hourly-member-sync": "15 * * * *",
  "daily-groups-designs": "30 1 * * *",
  "weekly-full-walk": "0 3 * * 0",
  "monthly-reconcile": "0 6 1 * *",
};

beforeAll(async () => {
  sb = await startSandbox({ members: 30, groups: 2, seed: 7 });
  dir = mkdtempSync(join(tmpdir(), "bsync-init-"));
});
afterAll(async () => {
  await sb?.close();
  if (dir) rmSync(dir, { recursive: true, force: true });
});

function folder(name: string) {
  const cwd = mkdtempSync(join(dir, `${name}-`));
  const cli = async (args: string[], env: Record<string, string> = {}) => {
    const r = await startCli(args, env, cwd).done;
    return { ...r, code: r.code ?? -1 };
  };
  return { cwd, cli };
}

/** A loopback port nobody listens on: taken, then given back. */
async function freePort(): Promise<number> {
  const server = createServer();
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  const { port } = server.address() as { port: number };
  await new Promise<void>((resolve) => server.close(() => resolve()));
  return port;
}

describe("benefits-sync init", () => {
  it("writes a commented file that the loader reads as it is: the URL, the snapshot, one folder sink, every job with its schedule; no key", async () => {
    const t = folder("fresh");
    const key = "init-test-key-that-must-stay-out-of-the-file";
    const r = await t.cli(["init", "--base-url", "https://benefits.example.com", "--db", "./snap.db"], { BENEFITS_API_KEY: key, BENEFITS_BASE_URL: "" });
    expect(r.code, r.stderr).toBe(0);
    const text = readFileSync(join(t.cwd, "benefits-sync.config.json"), "utf8");
    expect(text).not.toContain(key);
    expect(text).toMatch(/^\/\/ /m);
    expect(text).toMatch(/BENEFITS_API_KEY/);
    const c = loadConfig({ cwd: t.cwd, env: {} });
    expect(c.baseUrl).toBe("https://benefits.example.com");
    expect(c.apiKey).toBeUndefined();
    expect(c.db).toBe(join(t.cwd, "snap.db"));
    expect(c.sinks).toEqual({ deltas: { type: "folder", dir: "./deltas", format: "csv" } });
    expect(Object.fromEntries(Object.entries(c.jobs).map(([n, j]) => [n, j.schedule]))).toEqual(DECLARED_JOBS);
    const check = await t.cli(["config", "check"]);
    expect(check.code, check.stderr).toBe(0);
    expect(check.stdout).toMatch(/^benefits-sync\.config\.json: OK\n/);
    expect(check.stdout).toMatch(/key: +BENEFITS_API_KEY is not set/);
  });

  it("never writes over an existing file: exit 2, the file byte for byte as it was", async () => {
    const t = folder("exists");
    const mine = '{ "db": "mine.db" }\n';
    writeFileSync(join(t.cwd, "benefits-sync.config.json"), mine);
    const r = await t.cli(["init"]);
    expect(r.code).toBe(2);
    expect(r.stderr).toMatch(/benefits-sync\.config\.json already exists; nothing was written/);
    expect(readFileSync(join(t.cwd, "benefits-sync.config.json"), "utf8")).toBe(mine);
  });

  it("a URL that is not one: exit 2, naming the flag, and no file", async () => {
    const t = folder("badurl");
    const r = await t.cli(["init", "--base-url", "benefits.example.com"]);
    expect(r.code).toBe(2);
    expect(r.stderr).toMatch(/baseUrl: expected an http\(s\) URL, got "benefits\.example\.com" \(from --base-url\)/);
    expect(existsSync(join(t.cwd, "benefits-sync.config.json"))).toBe(false);
  });

  it("without a URL and a key it says what is left (set BENEFITS_API_KEY, the baseUrl) and calls nothing", async () => {
    const t = folder("left");
    const r = await t.cli(["init"]);
    expect(r.code, r.stderr).toBe(0);
    expect(r.stdout).toMatch(/Left to do before the first sync: set "baseUrl" in benefits-sync\.config\.json .*; set BENEFITS_API_KEY/);
    expect(r.stdout).not.toMatch(/endpoint/);
  });

  it("with the URL and the key, it ends with doctor's checks: all pass against a running service", async () => {
    const t = folder("doctor");
    const r = await t.cli(["init", "--base-url", sb.baseUrl], { BENEFITS_API_KEY: sb.keys.full });
    expect(r.code, r.stderr).toBe(0);
    expect(r.stdout).toMatch(/GET \/v2\/members +ok/);
    expect(r.stdout).toMatch(/All 6 checks passed\.\nReady: run benefits-sync sync/);
  });

  it("a URL nobody serves yet: the file is written (exit 0), doctor's table shows why, and the last line says what is left", async () => {
    const t = folder("nobody");
    const url = `http://127.0.0.1:${await freePort()}`;
    const r = await t.cli(["init", "--base-url", url], { BENEFITS_API_KEY: "some-key" });
    expect(r.code, r.stderr).toBe(0);
    expect(existsSync(join(t.cwd, "benefits-sync.config.json"))).toBe(true);
    expect(r.stdout).toMatch(/GET \/v2\/members +failed/);
    expect(r.stdout.trimEnd().split("\n").pop()).toMatch(/^Left to do: the service did not pass every check above; fix "baseUrl" in benefits-sync\.config\.json or BENEFITS_API_KEY, then run benefits-sync doctor\.$/);
  });

  it("the README's set-up commands, run as printed, succeed in an empty folder", async () => {
    const readme = readFileSync(README, "utf8");
    const block = [...readme.matchAll(/```sh\n([\s\S]*?)```/g)].map((m) => m[1]!).find((b) => /^benefits-sync init\b/m.test(b));
    expect(block, "a ```sh block in the README with benefits-sync init").toBeDefined();
    const lines = block!.split("\n").filter((l) => l.startsWith("benefits-sync "));
    expect(lines.some((l) => l.startsWith("benefits-sync config check"))).toBe(true);
    const t = folder("readme");
    for (const line of lines) {
      const r = await t.cli(line.split(/\s+/).slice(1));
      expect(r.code, `${line}\n${r.stderr}`).toBe(0);
    }
  });
});

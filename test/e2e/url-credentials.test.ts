/**
 * A password inside a URL is never printed: a bad sink URL in the config file, a mistyped base URL
 * in BENEFITS_BASE_URL or --base-url, a bad --sink; through `sync`, `sync --json`, `doctor` and
 * `doctor --json` of the built CLI. The URL is still shown, its password masked (`user:***@host`).
 */
import { mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { startCli } from "../helpers/cli-process.js";

const PASSWORD = "TopSecretPw";
let dir: string;

beforeAll(() => {
  dir = mkdtempSync(join(tmpdir(), "bsync-url-cred-"));
});
afterAll(() => {
  if (dir) rmSync(dir, { recursive: true, force: true });
});

function folder(name: string, config?: unknown): string {
  const cwd = mkdtempSync(join(dir, `${name}-`));
  if (config !== undefined) writeFileSync(join(cwd, "benefits-sync.config.json"), JSON.stringify(config));
  return cwd;
}

const commands = [["sync"], ["sync", "--json"], ["doctor"], ["doctor", "--json"]];

async function expectMasked(args: readonly string[], env: Record<string, string>, cwd: string, shown: string): Promise<void> {
  const r = await startCli(args, { BENEFITS_API_KEY: "url-cred-key-0001", BENEFITS_DB: join(cwd, "snap.db"), ...env }, cwd).done;
  const out = r.stdout + r.stderr;
  expect(r.code, `${args.join(" ")}: ${out}`).toBe(2);
  expect(out, args.join(" ")).not.toContain(PASSWORD);
  expect(out, args.join(" ")).toContain(shown);
}

describe("credentials in URLs are masked in every message", () => {
  it("a sink URL in the config file that is not postgres://", async () => {
    const cwd = folder("sink", { sinks: { wh: { type: "postgres", url: `mysql://etl:${PASSWORD}@host/db` } } });
    for (const args of commands) await expectMasked(args, { BENEFITS_BASE_URL: "http://127.0.0.1:9" }, cwd, "mysql://etl:***@host/db");
  });

  it("a mistyped base URL in BENEFITS_BASE_URL", async () => {
    const cwd = folder("env");
    for (const args of commands) await expectMasked(args, { BENEFITS_BASE_URL: `htps://svc:${PASSWORD}@host` }, cwd, "htps://svc:***@host");
  });

  it("a mistyped base URL in --base-url", async () => {
    const cwd = folder("flag");
    for (const args of commands) await expectMasked([...args, "--base-url", `htps://svc:${PASSWORD}@host`], {}, cwd, "htps://svc:***@host");
  });

  it("an environment's URL in the config file", async () => {
    const cwd = folder("environment", { environments: { demo: `htps://svc:${PASSWORD}@demo.example` }, environment: "demo" });
    for (const args of commands) await expectMasked(args, {}, cwd, "environments.demo");
  });

  it("a --sink that is neither a postgres:// URL nor a sink's name", async () => {
    const cwd = folder("flag-sink");
    await expectMasked(["sync", "--sink", `mysql://etl:${PASSWORD}@host/db`], { BENEFITS_BASE_URL: "http://127.0.0.1:9" }, cwd, "mysql://etl:***@host/db");
    await expectMasked(["sync", "--json", "--sink", `mysql://etl:${PASSWORD}@host/db`], { BENEFITS_BASE_URL: "http://127.0.0.1:9" }, cwd, "mysql://etl:***@host/db");
  });

  it("a libpq key=value connection string, in --sink and in the config file (config check)", async () => {
    const libpq = `host=127.0.0.1 port=1 password=${PASSWORD} dbname=x`;
    const env = { BENEFITS_BASE_URL: "http://127.0.0.1:9" };
    for (const json of [[], ["--json"]]) await expectMasked(["sync", ...json, "--sink", libpq], env, folder("libpq-flag"), "password=***");
    const cwd = folder("libpq-file", { sinks: { wh: { type: "postgres", url: libpq } } });
    for (const args of [...commands, ["config", "check"]]) await expectMasked(args, env, cwd, "password=***");
  });

  it("every other connection-string form: a long URL (cut to 60), ODBC PWD=, a quoted value with an escaped quote, sslpassword=", async () => {
    const env = { BENEFITS_BASE_URL: "http://127.0.0.1:9" };
    const forms: [string, string][] = [
      [`mysql://etl:${PASSWORD}${"x".repeat(60)}@warehouse.example.com/db`, "mysql://etl:***@"],
      [`Driver={PostgreSQL};Server=h;Uid=etl;PWD=${PASSWORD} ${PASSWORD};Database=x`, "PWD=***;"],
      [`host=h password='${PASSWORD} \\'${PASSWORD}' dbname=x`, "password=***"],
      [`host=h sslpassword=${PASSWORD} dbname=x`, "sslpassword=***"],
    ];
    for (const [url, shown] of forms) {
      await expectMasked(["sync", "--sink", url], env, folder("form-flag"), shown);
      await expectMasked(["config", "check"], env, folder("form-file", { sinks: { wh: { type: "postgres", url } } }), shown);
    }
  });
});

/**
 * Which service a command talks to is never guessed: with nothing configured, resolving the service
 * is a ConfigError that says what to set; the embedded sandbox only when asked for by name.
 */
import { mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import path from "node:path";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { loadConfig, resolveService } from "../../../src/config/index.js";
import { ConfigError } from "../../../src/errors.js";

let dir: string;
beforeEach(() => {
  dir = mkdtempSync(path.join(tmpdir(), "bs-service-"));
});
afterEach(() => rmSync(dir, { recursive: true, force: true }));

function resolveError(env: Record<string, string>): ConfigError {
  const config = loadConfig({ cwd: dir, env });
  try {
    resolveService(config);
  } catch (err) {
    expect(err).toBeInstanceOf(ConfigError);
    return err as ConfigError;
  }
  throw new Error("expected a ConfigError");
}

describe("no service configured", () => {
  it("the configuration names no environment of its own", () => {
    expect(loadConfig({ cwd: dir, env: {} }).environment).toBeUndefined();
  });

  it("is a ConfigError naming what to set, never the embedded sandbox", () => {
    const err = resolveError({});
    expect(err.problems).toHaveLength(1);
    const text = err.message;
    expect(text).toContain("no service is configured");
    expect(text).toContain("BENEFITS_BASE_URL");
    expect(text).toContain("BENEFITS_API_KEY");
    expect(text).toMatch(/"environment" and "environments" in the config file/);
    expect(text).toContain("--env sandbox");
  });

  it("a key alone does not name a service either, and the key is not quoted", () => {
    const key = "key-only-0123456789";
    const err = resolveError({ BENEFITS_API_KEY: key });
    expect(err.message).toContain("no service is configured");
    expect(err.message).not.toContain(key);
  });
});

describe("the embedded sandbox, asked for by name", () => {
  it("--env sandbox", () => {
    expect(resolveService(loadConfig({ cwd: dir, env: {}, flags: { environment: "sandbox" } }))).toMatchObject({ kind: "sandbox" });
  });

  it("BENEFITS_ENV=sandbox", () => {
    expect(resolveService(loadConfig({ cwd: dir, env: { BENEFITS_ENV: "sandbox" } }))).toMatchObject({ kind: "sandbox" });
  });

  it('"environment": "sandbox" in the config file', () => {
    writeFileSync(path.join(dir, "benefits-sync.config.json"), JSON.stringify({ environment: "sandbox" }));
    expect(resolveService(loadConfig({ cwd: dir, env: {} }))).toMatchObject({ kind: "sandbox" });
  });
});

describe("a remote service names its environment only when one was named", () => {
  it("a bare base URL has no environment name; a named one keeps it", () => {
    const bare = resolveService(loadConfig({ cwd: dir, env: { BENEFITS_BASE_URL: "https://svc.test/", BENEFITS_API_KEY: "key-abcdef" } }));
    expect(bare).toEqual({ kind: "remote", baseUrl: "https://svc.test", apiKey: "key-abcdef" });
    const named = resolveService(
      loadConfig({ cwd: dir, env: { BENEFITS_ENV: "demo", BENEFITS_API_KEY: "key-abcdef" }, flags: { environments: { demo: "https://demo.test" } } }),
    );
    expect(named).toEqual({ kind: "remote", environment: "demo", baseUrl: "https://demo.test", apiKey: "key-abcdef" });
  });
});

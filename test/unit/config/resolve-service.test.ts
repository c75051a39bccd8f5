import { describe, expect, it } from "vitest";
import { clientOptionsFromConfig } from "../../../src/api/client-tuning.js";
import { loadConfig, resolveService } from "../../../src/config/index.js";
import { ConfigError } from "../../../src/errors.js";

const load = (env: Record<string, string>, flags = {}) => loadConfig({ cwd: "/nonexistent-dir-for-test", env, flags });

describe("resolveService", () => {
  it("targets the embedded sandbox only when asked for by name", () => {
    expect(resolveService(load({ BENEFITS_ENV: "sandbox" }))).toEqual({ kind: "sandbox", embeddedSandbox: true });
    expect(() => resolveService(load({}))).toThrow(ConfigError);
  });

  it("uses the base URL over the named environment, without a trailing slash", () => {
    const c = load({ BENEFITS_BASE_URL: "https://svc.test/api/", BENEFITS_API_KEY: "key-abcdef", BENEFITS_ENV: "sandbox" });
    expect(resolveService(c)).toEqual({ kind: "remote", environment: "sandbox", baseUrl: "https://svc.test/api", apiKey: "key-abcdef" });
  });

  it("resolves a named environment from `environments`", () => {
    const c = load({ BENEFITS_ENV: "demo", BENEFITS_API_KEY: "key-abcdef" }, { environments: { demo: "https://demo.test" } });
    expect(resolveService(c)).toMatchObject({ kind: "remote", baseUrl: "https://demo.test" });
  });

  it("names both a missing base URL and a missing key in one ConfigError", () => {
    const c = load({ BENEFITS_ENV: "production" });
    let err: unknown;
    try {
      resolveService(c);
    } catch (e) {
      err = e;
    }
    expect(err).toBeInstanceOf(ConfigError);
    const problems = (err as ConfigError).problems;
    expect(problems).toHaveLength(2);
    expect(problems[0]).toMatch(/^environments\.production: /);
    expect(problems[1]).toMatch(/^apiKey: .*BENEFITS_API_KEY/);
  });
});

describe("clientOptionsFromConfig", () => {
  it("maps deadlines, retries, page sizes and claim date parameter names", () => {
    const c = load({}, {
      http: { concurrency: 2, requestsPerSecond: 5, headersTimeoutMs: 1234, retry: { maxAttempts: 3 } },
      resources: { members: { pageSize: 100, idField: "memberId" }, groups: { pageSize: 50 }, claims: { dateParams: { from: "dateFrom" } } },
    });
    expect(clientOptionsFromConfig(c)).toEqual({
      concurrency: 2,
      requestsPerSecond: 5,
      deadlines: { connectMs: 10_000, headersMs: 1234, bodyMs: 30_000 },
      retry: { maxAttempts: 3, baseMs: 250, capMs: 10_000, retryAfterCapMs: 60_000 },
      pageSize: { members: 100, groups: 50 },
      idFields: { designs: "id", groups: "id", members: "memberId", claims: "id" },
      claimDateParams: { from: "dateFrom", to: "serviceDateTo" },
    });
  });
});

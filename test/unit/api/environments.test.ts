import { describe, expect, it } from "vitest";
import { resolveBaseUrl } from "../../../src/config/environments.js";
import { ConfigError } from "../../../src/errors.js";

describe("resolveBaseUrl", () => {
  const environments = { production: "https://api.example.test/", demo: "https://demo.example.test/api/" };
  it("uses the named environment's configured URL, without a trailing slash", () => {
    expect(resolveBaseUrl({ environment: "production", environments })).toBe("https://api.example.test");
    expect(resolveBaseUrl({ environment: "demo", environments })).toBe("https://demo.example.test/api");
  });
  it("lets an explicit baseUrl win", () => {
    expect(resolveBaseUrl({ environment: "demo", environments, baseUrl: "http://127.0.0.1:4010" })).toBe("http://127.0.0.1:4010");
  });
  it("names the missing environment key", () => {
    const err = (() => {
      try {
        resolveBaseUrl({ environment: "demo", environments: {} });
      } catch (e) {
        return e;
      }
    })();
    expect(err).toBeInstanceOf(ConfigError);
    expect((err as ConfigError).problems[0]).toMatch(/^environments\.demo: /);
  });
  it("rejects what is not an http(s) URL, and credentials in a URL", () => {
    expect(() => resolveBaseUrl({ baseUrl: "ftp://x.test" })).toThrow(/baseUrl: expected an http\(s\) URL/);
    expect(() => resolveBaseUrl({ baseUrl: "not a url" })).toThrow(ConfigError);
    expect(() => resolveBaseUrl({ baseUrl: "https://user:secret-pass@x.test" })).toThrow(/credentials/);
    expect(() => resolveBaseUrl({ baseUrl: "https://user:secret-pass@x.test" })).not.toThrow(/secret-pass/);
  });
});

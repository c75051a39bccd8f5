import { mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import path from "node:path";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { ConfigError } from "../../../src/errors.js";
import { loadConfig } from "../../../src/config/index.js";

let dir: string;
beforeEach(() => {
  dir = mkdtempSync(path.join(tmpdir(), "bs-config-"));
});
afterEach(() => rmSync(dir, { recursive: true, force: true }));

const writeConfig = (data: unknown, name = "benefits-sync.config.json") => {
  const file = path.join(dir, name);
  writeFileSync(file, typeof data === "string" ? data : JSON.stringify(data));
  return file;
};

function configError(fn: () => unknown): ConfigError {
  try {
    fn();
  } catch (err) {
    expect(err).toBeInstanceOf(ConfigError);
    return err as ConfigError;
  }
  throw new Error("expected a ConfigError");
}

describe("loadConfig", () => {
  it("fills every default with no settings at all, but names no service", () => {
    const c = loadConfig({ cwd: dir, env: {} });
    expect(c.environment).toBeUndefined();
    expect(c.db).toBe(path.join(dir, "benefits-sync.db"));
    expect(c.pii).toBe("token");
    expect(c.webhookSecrets).toEqual([]);
    expect(c.http).toEqual({
      concurrency: 4,
      requestsPerSecond: 0,
      connectTimeoutMs: 10_000,
      headersTimeoutMs: 30_000,
      bodyTimeoutMs: 30_000,
      retry: { maxAttempts: 5, baseMs: 250, capMs: 10_000, retryAfterCapMs: 60_000 },
    });
    expect(c.resources.members).toEqual({ idField: "id" });
    expect(c.resources.claims).toEqual({ idField: "id", dateParams: { from: "serviceDateFrom", to: "serviceDateTo" }, lookbackDays: 90 });
    expect(c.sync).toEqual({ maxDeleteShare: 0.1, maxDeleteCount: 50, emptyScopeMin: 5, absenceRuns: 1, groupConcurrency: 4 });
  });

  it("keeps the environment as named, and invents none from a base URL or a key", () => {
    expect(loadConfig({ cwd: dir, env: { BENEFITS_API_KEY: "key-123456" } }).environment).toBeUndefined();
    expect(loadConfig({ cwd: dir, env: { BENEFITS_BASE_URL: "https://svc.test" } }).environment).toBeUndefined();
    expect(loadConfig({ cwd: dir, env: { BENEFITS_ENV: "demo" } }).environment).toBe("demo");
  });

  it("lets flags win over the environment, which wins over the file", () => {
    writeConfig({ db: "file.db", baseUrl: "https://file.test", pii: "keep", http: { concurrency: 7 } });
    const env = { BENEFITS_DB: "env.db", BENEFITS_BASE_URL: "https://env.test" };
    const fileOnly = loadConfig({ cwd: dir, env: {} });
    expect([fileOnly.db, fileOnly.baseUrl, fileOnly.pii]).toEqual([path.join(dir, "file.db"), "https://file.test", "keep"]);
    const withEnv = loadConfig({ cwd: dir, env });
    expect([withEnv.db, withEnv.baseUrl]).toEqual([path.join(dir, "env.db"), "https://env.test"]);
    const withFlags = loadConfig({ cwd: dir, env, flags: { db: "flag.db", pii: "token" } });
    expect([withFlags.db, withFlags.baseUrl, withFlags.pii]).toEqual([path.join(dir, "flag.db"), "https://env.test", "token"]);
    // a nested file setting survives overlays that do not touch it
    expect(withFlags.http.concurrency).toBe(7);
    expect(withFlags.http.retry.maxAttempts).toBe(5);
  });

  it("treats an empty variable as unset and splits webhook secrets on commas", () => {
    writeConfig({ db: "file.db" });
    const c = loadConfig({ cwd: dir, env: { BENEFITS_DB: "", BENEFITS_WEBHOOK_SECRET: " old-secret , new-secret ,," } });
    expect(c.db).toBe(path.join(dir, "file.db"));
    expect(c.webhookSecrets).toEqual(["old-secret", "new-secret"]);
  });

  it("reads --config FILE instead of the default file, and a missing explicit file is an error", () => {
    writeConfig({ db: "default.db" });
    const other = writeConfig({ db: "other.db" }, "other.json");
    expect(loadConfig({ cwd: dir, env: {}, configPath: other }).db).toBe(path.join(dir, "other.db"));
    const err = configError(() => loadConfig({ cwd: dir, env: {}, configPath: "missing.json" }));
    expect(err.problems).toEqual(["--config missing.json: no such file"]);
  });

  it("returns a deep-frozen object", () => {
    const c = loadConfig({ cwd: dir, env: {} });
    expect(Object.isFrozen(c)).toBe(true);
    expect(Object.isFrozen(c.http.retry)).toBe(true);
    expect(Object.isFrozen(c.webhookSecrets)).toBe(true);
    expect(() => {
      (c.http as { concurrency: number }).concurrency = 99;
    }).toThrow(TypeError);
  });

  it("names every bad key in one error, with its path and its source", () => {
    writeConfig({
      http: { concurrency: "x", retry: { maxAttempts: 0 }, concurency: 3 },
      environment: "prod",
      resources: { claims: { dateParams: { from: "" } }, members: { pageSize: 2.5 } },
      sync: { maxDeleteShare: 1.5 },
      colour: "blue",
    });
    const err = configError(() =>
      loadConfig({ cwd: dir, env: { BENEFITS_BASE_URL: "not a url" }, flags: { pii: "plain" } }),
    );
    const p = err.problems;
    expect(p).toContain('http.concurrency: expected a positive integer, got "x" (from the config file benefits-sync.config.json)');
    expect(p).toContain("http.retry.maxAttempts: expected a positive integer, got 0 (from the config file benefits-sync.config.json)");
    expect(p).toContain('http.concurency: unknown key (did you mean "concurrency"?) (from the config file benefits-sync.config.json)');
    expect(p).toContain("colour: unknown key (from the config file benefits-sync.config.json)");
    expect(p.find((x) => x.startsWith("environment:"))).toMatch(/expected one of "production", "demo", "sandbox", got "prod"/);
    expect(p).toContain('baseUrl: expected an http(s) URL, got "not a url" (from BENEFITS_BASE_URL)');
    expect(p).toContain('pii: expected one of "token", "keep", got "plain" (from --pii)');
    expect(p.find((x) => x.startsWith("resources.claims.dateParams.from:"))).toBeDefined();
    expect(p.find((x) => x.startsWith("resources.members.pageSize:"))).toContain("got 2.5");
    expect(p.find((x) => x.startsWith("sync.maxDeleteShare:"))).toContain("got 1.5");
    expect(p).toHaveLength(10);
    // the message lists them all, one per line
    for (const problem of p) expect(err.message).toContain(problem);
  });

  it("a misspelt key is read as the key it is nearest to, so what it holds is checked in the same go", () => {
    writeConfig({
      htpp: { concurency: 0 },
      jos: { "weekly-full-walk": { enabeld: "yes", schedule: 5 } },
      sinks: { out: { type: "folder", dir: "./out", formt: "xml" } },
    });
    const p = configError(() => loadConfig({ cwd: dir, env: {} })).problems.map((x) => x.replace(" (from the config file benefits-sync.config.json)", ""));
    expect(p).toEqual(
      expect.arrayContaining([
        'htpp: unknown key (did you mean "http"?); what it holds is checked as "http"',
        'htpp.concurency: unknown key (did you mean "concurrency"?)',
        "htpp.concurency: expected a positive integer, got 0",
        'jos: unknown key (did you mean "jobs"?); what it holds is checked as "jobs"',
        'jos.weekly-full-walk.enabeld: unknown key (did you mean "enabled"?)',
        'jos.weekly-full-walk.enabeld: expected true or false, got "yes"',
        "jos.weekly-full-walk.schedule: expected a cron expression, got 5",
        'sinks.out.formt: unknown key (did you mean "format"?)',
        'sinks.out.formt: expected one of "csv", "jsonl", "parquet", got "xml"',
      ]),
    );
    expect(p).toHaveLength(9);
  });

  it("never puts the API key or the PII key in the error, even when they are the bad values", () => {
    const apiKey = "sk_live_9f8e7d6c5b4a";
    const piiKey = "tiny";
    // the key itself is the bad value
    writeConfig({ apiKey: 12345 });
    const err = configError(() => loadConfig({ cwd: dir, env: { BENEFITS_PII_KEY: piiKey } }));
    expect(err.problems.find((x) => x.startsWith("apiKey:"))).toMatch(/got a number \(not shown\)/);
    // the key pasted into the wrong setting: it is still masked, because it was registered first
    writeConfig({ http: { concurrency: apiKey } });
    const err2 = configError(() => loadConfig({ cwd: dir, env: { BENEFITS_API_KEY: apiKey, BENEFITS_PII_KEY: piiKey } }));
    for (const e of [err, err2]) {
      expect(e.message).not.toContain(apiKey);
      expect(e.message).not.toContain(piiKey);
      expect(e.problems.join("\n")).not.toContain(apiKey);
      expect(e.problems.find((x) => x.startsWith("piiKey:"))).toBe(
        "piiKey: expected a secret of at least 16 characters, got a value of 4 characters (not shown) (from BENEFITS_PII_KEY)",
      );
    }
    // http.concurrency is not a secret key, but its value is the registered key: masked
    expect(err2.problems.find((x) => x.startsWith("http.concurrency:"))).toContain("[redacted]");
  });

  it("reports a JSON syntax error with the file and the position, without quoting the file", () => {
    writeConfig('{\n  "db": "x.db",\n  "apiKey": sk_live_topsecret\n}');
    const err = configError(() => loadConfig({ cwd: dir, env: {} }));
    expect(err.problems).toHaveLength(1);
    expect(err.problems[0]).toMatch(/^benefits-sync\.config\.json: not valid JSON at line 3, column 13 \(Unexpected token/);
    expect(err.message).not.toContain("topsecret");

    writeConfig('{\n  "db": "x.db",,\n}');
    expect(configError(() => loadConfig({ cwd: dir, env: {} })).problems[0]).toMatch(/line 2, column 16/);
    writeConfig("[1, 2]");
    expect(configError(() => loadConfig({ cwd: dir, env: {} })).problems[0]).toBe(
      "benefits-sync.config.json: expected a JSON object, got an array",
    );
  });
});

/** The service a snapshot copies: recorded on the first run, compared on every later one. */
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import type { Database } from "better-sqlite3";
import { openDatabase } from "../../../src/store/file/database.js";
import { checkServiceIdentity, describeServiceIdentity, readServiceIdentity, serviceIdentity } from "../../../src/store/file/service-identity.js";
import { ConfigError } from "../../../src/errors.js";
import type { ServiceTarget } from "../../../src/config/index.js";

const KEY = "sk_live_identity_0123456789";
/** Whole resolved targets, key included: the identity must take only what it needs from them. */
const remote = (baseUrl: string, environment?: "production" | "demo" | "sandbox") => {
  const target: ServiceTarget = { kind: "remote", baseUrl, apiKey: KEY, ...(environment ? { environment } : {}) };
  return serviceIdentity(target);
};
const embedded: ServiceTarget = { kind: "sandbox", embeddedSandbox: true };
const sandbox = serviceIdentity(embedded);

let db: Database;
beforeEach(() => {
  db = openDatabase(":memory:");
});
afterEach(() => db.close());

const metaRows = () => db.prepare("SELECT key, value FROM _meta WHERE key NOT IN ('snapshot_id', 'erasure') ORDER BY key").all();
const refusal = (fn: () => unknown): ConfigError => {
  try {
    fn();
  } catch (err) {
    expect(err).toBeInstanceOf(ConfigError);
    return err as ConfigError;
  }
  throw new Error("expected a ConfigError");
};

describe("serviceIdentity", () => {
  it("the embedded sandbox is just `sandbox`, whatever port it listens on", () => {
    expect(sandbox).toEqual({ environment: "sandbox" });
    expect(describeServiceIdentity(sandbox)).toBe("the embedded sandbox");
  });

  it("a remote service is its environment name (when named) and its base URL, normalised", () => {
    expect(remote("HTTPS://Svc.Example.TEST:443/api/v/", "production")).toEqual({ environment: "production", baseUrl: "https://svc.example.test/api/v" });
    expect(remote("http://127.0.0.1:4010/")).toEqual({ baseUrl: "http://127.0.0.1:4010" });
    expect(describeServiceIdentity(remote("https://demo.test", "demo"))).toBe("the demo environment at https://demo.test");
    expect(describeServiceIdentity(remote("https://svc.test"))).toBe("the service at https://svc.test");
  });

  it("never contains the API key, not even one smuggled into the URL", () => {
    const id = remote(`https://user:${KEY}@svc.test/api/?key=${KEY}#${KEY}`, "production");
    expect(id).toEqual({ environment: "production", baseUrl: "https://svc.test/api" });
    expect(JSON.stringify(id)).not.toContain(KEY);
    checkServiceIdentity(db, id);
    expect(JSON.stringify(metaRows())).not.toContain(KEY);
  });
});

describe("checkServiceIdentity", () => {
  it("records the service on the first run, as JSON under the key `service`", () => {
    expect(readServiceIdentity(db)).toBeUndefined();
    expect(checkServiceIdentity(db, remote("https://svc.test/", "production"))).toBe("recorded");
    expect(metaRows()).toEqual([{ key: "service", value: '{"environment":"production","baseUrl":"https://svc.test"}' }]);
    expect(readServiceIdentity(db)).toEqual({ environment: "production", baseUrl: "https://svc.test" });
  });

  it("accepts the same service again", () => {
    checkServiceIdentity(db, sandbox);
    expect(checkServiceIdentity(db, serviceIdentity({ ...embedded }))).toBe("same");
    expect(checkServiceIdentity(db, sandbox, { record: false })).toBe("same");
  });

  it("refuses another service, naming both and the fix, and changes nothing", () => {
    checkServiceIdentity(db, sandbox);
    const before = metaRows();
    const err = refusal(() => checkServiceIdentity(db, remote("http://127.0.0.1:4010", "production")));
    expect(err.message).toContain("the embedded sandbox");
    expect(err.message).toContain("the production environment at http://127.0.0.1:4010");
    expect(err.message).toContain("--db");
    expect(metaRows()).toEqual(before);
  });

  it("tells two remote services apart by base URL, path included", () => {
    checkServiceIdentity(db, remote("https://svc.test/a"));
    expect(() => checkServiceIdentity(db, remote("https://svc.test/b"))).toThrow(ConfigError);
    expect(() => checkServiceIdentity(db, remote("https://svc.test:8443/a"))).toThrow(ConfigError);
    expect(checkServiceIdentity(db, remote("https://SVC.test/a/"))).toBe("same");
  });

  it("one base URL is one service, whether or not an environment name came with it", () => {
    checkServiceIdentity(db, remote("https://svc.test"));
    expect(checkServiceIdentity(db, remote("https://svc.test", "production"))).toBe("same");
    // The first description stays: the snapshot remembers what it was first told.
    expect(readServiceIdentity(db)).toEqual({ baseUrl: "https://svc.test" });
  });

  it("tells a served sandbox at a URL from the embedded one", () => {
    checkServiceIdentity(db, sandbox);
    expect(() => checkServiceIdentity(db, remote("http://127.0.0.1:4010", "sandbox"))).toThrow(ConfigError);
  });

  it("a dry run checks but records nothing", () => {
    expect(checkServiceIdentity(db, sandbox, { record: false })).toBe("recorded");
    expect(metaRows()).toEqual([]);
    checkServiceIdentity(db, sandbox);
    expect(() => checkServiceIdentity(db, remote("https://svc.test"), { record: false })).toThrow(ConfigError);
  });

  it("a snapshot made before services were recorded adopts the first one it sees, and says so", () => {
    db.prepare("INSERT INTO _runs (job, status, started_at, options) VALUES ('sync', 'succeeded', '2026-01-01T00:00:00Z', '{}')").run();
    expect(checkServiceIdentity(db, remote("https://svc.test", "production"))).toBe("adopted");
    expect(checkServiceIdentity(db, remote("https://svc.test", "production"))).toBe("same");
    expect(() => checkServiceIdentity(db, sandbox)).toThrow(ConfigError);
  });
});

describe("checkServiceIdentity on a file another connection is writing", () => {
  it("an already recorded service is checked without waiting for the writer", async () => {
    const { mkdtempSync, rmSync } = await import("node:fs");
    const { tmpdir } = await import("node:os");
    const { join } = await import("node:path");
    const dir = mkdtempSync(join(tmpdir(), "bs-identity-"));
    const file = join(dir, "snap.db");
    const writer = openDatabase(file);
    const reader = openDatabase(file);
    try {
      checkServiceIdentity(writer, sandbox);
      reader.pragma("busy_timeout = 50");
      writer.exec("BEGIN IMMEDIATE"); // a run holding the file
      expect(checkServiceIdentity(reader, sandbox)).toBe("same");
      expect(() => checkServiceIdentity(reader, remote("https://svc.test"))).toThrow(/the snapshot copies the embedded sandbox/);
      writer.exec("ROLLBACK");
    } finally {
      writer.close();
      reader.close();
      rmSync(dir, { recursive: true, force: true });
    }
  });
});

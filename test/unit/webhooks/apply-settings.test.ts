import { mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import path from "node:path";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { ConfigError } from "../../../src/errors.js";
import { loadConfig } from "../../../src/config/index.js";

let dir: string;
beforeEach(() => {
  dir = mkdtempSync(path.join(tmpdir(), "bs-whcfg-"));
});
afterEach(() => rmSync(dir, { recursive: true, force: true }));

const load = (file: unknown) => {
  writeFileSync(path.join(dir, "benefits-sync.config.json"), JSON.stringify(file));
  return loadConfig({ cwd: dir, env: {} });
};

describe("the worker's keys in the webhooks block", () => {
  it("default to batches of 100, 8 attempts backing off from 5 s to 10 min, and 30 days of retention", () => {
    expect(load({}).webhooks).toMatchObject({ batchSize: 100, maxAttempts: 8, retryBaseMs: 5_000, retryCapMs: 600_000, retentionDays: 30 });
    expect(load({ webhooks: { retentionDays: 7, batchSize: 10 } }).webhooks).toMatchObject({ retentionDays: 7, batchSize: 10, maxAttempts: 8 });
  });

  it("a bad value is an error naming the key, and a misspelt key is refused", () => {
    let err: unknown;
    try {
      load({ webhooks: { maxAttempts: 0, retentionDay: 3 } });
    } catch (e) {
      err = e;
    }
    expect(err).toBeInstanceOf(ConfigError);
    const text = (err as ConfigError).problems.join("\n");
    expect(text).toMatch(/webhooks\.maxAttempts: expected a positive integer/);
    expect(text).toMatch(/webhooks\.retentionDay/);
  });
});

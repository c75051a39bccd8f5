/**
 * A first sync against a mistyped URL (here a closed port) must not bind the new snapshot to that
 * URL: the snapshot is bound to a service only once the service answered. Until then only the
 * failed run is recorded, and a sync to the right URL then works on the same file with no flag.
 * The failure names where it tried (host and port), never the key. Through the built CLI.
 */
import BetterSqlite3 from "better-sqlite3";
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { startSandbox, type Sandbox } from "../../src/sandbox/index.js";
import { startCli } from "../helpers/cli-process.js";
import { closedPort } from "../helpers/ports.js";

const PII = "first-answer-pii-key-0123456789";
let sb: Sandbox;
let dir: string;

beforeAll(async () => {
  sb = await startSandbox({ members: 60, groups: 2, seed: 3 });
  dir = mkdtempSync(join(tmpdir(), "bsync-first-answer-"));
});
afterAll(async () => {
  await sb?.close();
  if (dir) rmSync(dir, { recursive: true, force: true });
});


function read(db: string) {
  const conn = new BetterSqlite3(db, { readonly: true });
  try {
    return {
      service: conn.prepare("SELECT value FROM _meta WHERE key = 'service'").pluck().get() as string | undefined,
      runs: conn.prepare("SELECT run_id, status FROM _runs ORDER BY run_id").all() as { run_id: number; status: string }[],
    };
  } finally {
    conn.close();
  }
}

describe("a snapshot is bound to its service only after the service answered", () => {
  it("a first sync to a closed port records only a failed run; the next sync to the sandbox binds it and succeeds", async () => {
    const db = join(dir, "snap.db");
    const port = await closedPort();
    const key = "first-answer-key-0001";
    const wrong = await startCli(["sync", "--json"], { BENEFITS_BASE_URL: `http://127.0.0.1:${port}`, BENEFITS_API_KEY: key, BENEFITS_DB: db, BENEFITS_PII_KEY: PII }, dir).done;
    expect(wrong.code, wrong.stderr).toBe(1);
    expect(read(db)).toEqual({ service: undefined, runs: [{ run_id: 1, status: "failed" }] });

    const right = await startCli(["sync", "--json"], { BENEFITS_BASE_URL: sb.baseUrl, BENEFITS_API_KEY: sb.keys.full, BENEFITS_DB: db, BENEFITS_PII_KEY: PII }, dir).done;
    expect(right.code, right.stderr).toBe(0);
    // Not taken for a snapshot from before services were recorded: it never held anything.
    expect(right.stderr).not.toContain("did not record which service");
    const after = read(db);
    expect(after.runs).toEqual([{ run_id: 1, status: "failed" }, { run_id: 2, status: "succeeded" }]);
    expect(JSON.parse(after.service!)).toEqual({ baseUrl: sb.baseUrl });
  });

  it("the failure names the host and port it could not reach, never the key", async () => {
    const port = await closedPort();
    const key = "first-answer-key-0002";
    const env = { BENEFITS_API_KEY: key, BENEFITS_DB: join(dir, "refused.db"), BENEFITS_PII_KEY: PII };
    const json = await startCli(["sync", "--json"], { ...env, BENEFITS_BASE_URL: `http://127.0.0.1:${port}/api` }, dir).done;
    expect(json.code, json.stderr).toBe(1);
    const error = (JSON.parse(json.stdout.trim().split("\n").pop()!) as { error: { message: string } }).error.message;
    expect(error).toContain(`127.0.0.1:${port}`);
    expect(error).toContain("connection refused");
    const plain = await startCli(["sync"], { ...env, BENEFITS_BASE_URL: `http://127.0.0.1:${port}/api` }, dir).done;
    expect(plain.stderr).toContain(`127.0.0.1:${port}`);
    expect(json.stdout + json.stderr + plain.stdout + plain.stderr).not.toContain(key);
  });
});

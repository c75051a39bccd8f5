/** `benefits-sync doctor` through `main()` against the real sandbox on port 0, one sandbox for the file. */
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { openDatabase } from "../../../src/store/file/database.js";
import { piiKeyCheck, resolveSnapshotPiiKey, snapshotIdOf } from "../../../src/store/pii/pii-key-identity.js";
import { ExitCode } from "../../../src/cli/exit-codes.js";
import { FORBIDDEN_ADVICE } from "../../../src/cli/doctor/checks.js";
import { startSandbox, type Sandbox } from "../../../src/sandbox/index.js";
import { runCli } from "./run-cli.js";

describe("benefits-sync doctor (sandbox)", () => {
  let sandbox: Sandbox;
  beforeAll(async () => {
    sandbox = await startSandbox({ members: 200, seed: 7 });
  });
  afterAll(() => sandbox?.close());

  const doctor = (key: string, extra: string[] = []) =>
    runCli(["doctor", "--base-url", sandbox.baseUrl, "--json", ...extra], { env: { BENEFITS_API_KEY: key }, cwd: "/nonexistent-cwd" });
  const parse = (stdout: string) => JSON.parse(stdout) as { ok: boolean; checks: { endpoint: string; result: string; detail: string }[] };

  it("full key: every check ok, exit 0", async () => {
    const r = await doctor(sandbox.keys.full);
    expect(r.stderr).toBe("");
    expect(r.code).toBe(ExitCode.OK);
    expect(parse(r.stdout).checks.map((c) => c.result)).toEqual(["ok", "ok", "ok", "ok", "ok", "ok"]);
  });

  it("key without claims permission: claims forbidden with the advice, exit 1", async () => {
    const r = await doctor(sandbox.keys.noClaims);
    expect(r.code).toBe(ExitCode.RUN_FAILED);
    const checks = parse(r.stdout).checks;
    const claims = checks.find((c) => c.endpoint === "GET /v1/claims/medical")!;
    expect(claims.result).toBe("forbidden");
    expect(claims.detail).toContain(FORBIDDEN_ADVICE);
    expect(checks.filter((c) => c.result !== "ok")).toHaveLength(1);
  });

  it("read-only key: doctor only reads, so every check is ok", async () => {
    const r = await doctor(sandbox.keys.readOnly);
    expect(parse(r.stdout).checks.map((c) => c.result)).toEqual(["ok", "ok", "ok", "ok", "ok", "ok"]);
    expect(r.code).toBe(ExitCode.OK);
  });

  it("a wrong key: auth failed, stopped early, exit 1; the text table says so", async () => {
    const r = await runCli(["doctor", "--base-url", sandbox.baseUrl], { env: { BENEFITS_API_KEY: "not-a-sandbox-key" }, cwd: "/nonexistent-cwd" });
    expect(r.code).toBe(ExitCode.RUN_FAILED);
    expect(r.stdout).toMatch(/GET \/v2\/designs\s+auth failed/);
    expect(r.stdout).toContain("Stopped: the first call was refused (401)");
    expect(r.stdout).not.toContain("not-a-sandbox-key");
  });

  it("--env sandbox: doctor checks the embedded sandbox, exit 0", async () => {
    const r = await runCli(["doctor", "--env", "sandbox", "--json"], { env: {}, cwd: "/nonexistent-cwd" });
    expect(r.code).toBe(ExitCode.OK);
    const out = JSON.parse(r.stdout) as { service: string; ok: boolean };
    expect(out.service).toMatch(/^embedded sandbox \(http:\/\/127\.0\.0\.1:\d+\)$/);
    expect(out.ok).toBe(true);
  });

  it("the PII key line: ok for the snapshot's key, a mismatch (exit 1) naming pii rekey for another, not recorded for a snapshot without a check", async () => {
    const dir = mkdtempSync(join(tmpdir(), "doctor-pii-"));
    try {
      const db = join(dir, "snap.db");
      openDatabase(db).close();
      const run = (piiKey: string) =>
        runCli(["doctor", "--base-url", sandbox.baseUrl, "--db", db, "--json"], { env: { BENEFITS_API_KEY: sandbox.keys.full, BENEFITS_PII_KEY: piiKey }, cwd: dir });
      const line = (stdout: string) => (JSON.parse(stdout) as { piiKey: { result: string; detail: string } }).piiKey;
      expect(line((await run("doctor-pii-key-A-0123456789")).stdout).result).toBe("not recorded");
      resolveSnapshotPiiKey(db, "doctor-pii-key-A-0123456789");
      const same = await run("doctor-pii-key-A-0123456789");
      expect([same.code, line(same.stdout).result]).toEqual([ExitCode.OK, "ok"]);
      const other = await run("doctor-pii-key-B-9876543210");
      expect([other.code, line(other.stdout).result]).toEqual([ExitCode.RUN_FAILED, "mismatch"]);
      expect(line(other.stdout).detail).toMatch(/BENEFITS_PII_KEY is not the key the snapshot was tokenised with.*benefits-sync pii rekey --old-key-env NAME/);
      const table = await runCli(["doctor", "--base-url", sandbox.baseUrl, "--db", db], { env: { BENEFITS_API_KEY: sandbox.keys.full, BENEFITS_PII_KEY: "doctor-pii-key-B-9876543210" }, cwd: dir });
      expect(table.stdout).toMatch(/^PII key: mismatch \(/m);
      expect(table.stdout + other.stdout).not.toContain("doctor-pii-key-B");
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });

  it("the PII key line names versions written under another key than the snapshot's (exit 1); after a rekey every run is the new key's", async () => {
    const small = await startSandbox({ members: 20, seed: 51 });
    const dir = mkdtempSync(join(tmpdir(), "doctor-pii-stale-"));
    try {
      const db = join(dir, "snap.db");
      const env = (piiKey: string, more: Record<string, string> = {}) => ({ env: { BENEFITS_API_KEY: small.keys.full, BENEFITS_PII_KEY: piiKey, ...more }, cwd: dir });
      const A = "doctor-stale-key-A-0123456789";
      const B = "doctor-stale-key-B-9876543210";
      const doctorB = async () => {
        const r = await runCli(["doctor", "--base-url", small.baseUrl, "--db", db, "--json"], env(B));
        return { code: r.code, ...(JSON.parse(r.stdout) as { piiKey: { result: string; detail: string } }).piiKey };
      };
      expect((await runCli(["sync", "--base-url", small.baseUrl, "--db", db], env(A))).code).toBe(ExitCode.OK);
      const rekey = await runCli(["pii", "rekey", "--old-key-env", "OLD_PII_KEY"], { ...env(B, { OLD_PII_KEY: A, BENEFITS_DB: db }) });
      expect(rekey.code, rekey.stderr).toBe(ExitCode.OK);
      expect(await doctorB()).toMatchObject({ code: ExitCode.OK, result: "ok" });
      // What a writer under the old key leaves (as the webhook worker did before issue 51): a run
      // that records A's check on a snapshot that records B's.
      const conn = openDatabase(db);
      const members = conn.prepare("SELECT COUNT(*) FROM _members_v WHERE valid_from_run = 1").pluck().get() as number;
      conn.prepare("UPDATE _runs SET pii_key_check = ? WHERE run_id = 1").run(piiKeyCheck(Buffer.from(A), snapshotIdOf(conn)!));
      conn.close();
      const stale = await doctorB();
      expect(stale.code).toBe(ExitCode.RUN_FAILED);
      expect(stale.result).toBe("stale versions");
      expect(stale.detail).toContain(`${members} members versions`);
      expect(stale.detail).toMatch(/of run 1 were written under another PII key than the snapshot's/);
    } finally {
      rmSync(dir, { recursive: true, force: true });
      await small.close();
    }
  });
});

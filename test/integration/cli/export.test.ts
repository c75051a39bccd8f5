import { existsSync, mkdtempSync, readdirSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import BetterSqlite3 from "better-sqlite3";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { ExitCode } from "../../../src/cli/exit-codes.js";
import { startSandbox, type Sandbox } from "../../../src/sandbox/index.js";
import { runCli } from "../../unit/cli/run-cli.js";
import { ALL_CLAIMS } from "../../helpers/sandbox-truth.js";
import { runDir } from "../../helpers/run-folders.js";

let sb: Sandbox;
let dir: string;
let env: Record<string, string>;
const window = ["--claims-since", ALL_CLAIMS.from, "--claims-until", ALL_CLAIMS.to];

beforeAll(async () => {
  sb = await startSandbox({ members: 120, groups: 2, seed: 5 });
  dir = mkdtempSync(join(tmpdir(), "bsync-export-"));
  env = { BENEFITS_BASE_URL: sb.baseUrl, BENEFITS_API_KEY: sb.keys.full, BENEFITS_DB: join(dir, "snap.db"), BENEFITS_PII_KEY: "export-test-pii-key-0123456789" };
  expect((await runCli(["sync", ...window, "--quiet"], { env, cwd: dir })).code).toBe(ExitCode.OK);
  await sb.advance();
  expect((await runCli(["sync", ...window, "--quiet"], { env, cwd: dir })).code).toBe(ExitCode.OK);
});
afterAll(async () => {
  await sb?.close();
  if (dir) rmSync(dir, { recursive: true, force: true });
});

function bytesOf(d: string): Record<string, string> {
  return Object.fromEntries(readdirSync(d).sort().map((f) => [f, readFileSync(join(d, f)).toString("base64")]));
}

describe("benefits-sync export --run N --out DIR", () => {
  it("writes exactly run N's changes to DIR/N, the same bytes each time, and leaves the ledger alone", async () => {
    const first = await runCli(["export", "--run", "2", "--out", "exports"], { env, cwd: dir });
    expect(first.stderr).toBe("");
    expect(first.code).toBe(ExitCode.OK);
    const folder = join(dir, "exports", runDir(2));
    expect(first.stdout).toContain(folder);
    const bytes = bytesOf(folder);
    const manifest = JSON.parse(readFileSync(join(folder, "manifest.json"), "utf8")) as { runId: number; runs: number[]; files: { file: string; rows: number }[] };
    expect(manifest).toMatchObject({ runId: 2, runs: [2] });
    const db = new BetterSqlite3(env.BENEFITS_DB!, { readonly: true });
    try {
      const changes = db.prepare("SELECT COUNT(*) FROM changes WHERE run_id = 2 AND resource IN ('designs','groups','plans','members','coverages','claims')").pluck().get() as number;
      expect(changes).toBeGreaterThan(0);
      expect(manifest.files.filter((f) => f.file !== "claim_lines.csv").reduce((n, f) => n + f.rows, 0)).toBe(changes);
      expect(db.prepare("SELECT COUNT(*) FROM _deliveries").pluck().get()).toBe(0);
    } finally {
      db.close();
    }
    const again = await runCli(["export", "--run", "2", "--out", join(dir, "exports"), "--format", "csv", "--json"], { env, cwd: dir });
    expect(again.code).toBe(ExitCode.OK);
    expect(JSON.parse(again.stdout.trim().split("\n").pop()!)).toMatchObject({ runId: 2, runs: [2], dir: folder, format: "csv" });
    expect(bytesOf(folder)).toEqual(bytes);
  });

  it("--db selects the snapshot, as for other commands", async () => {
    const r = await runCli(["--db", env.BENEFITS_DB!, "export", "--run", "1", "--out", "by-flag"], { env: { BENEFITS_DB: join(dir, "nowhere.db") }, cwd: dir });
    expect(r.stderr).toBe("");
    expect(r.code).toBe(ExitCode.OK);
    expect(existsSync(join(dir, "by-flag", runDir(1), "manifest.json"))).toBe(true);
    expect(existsSync(join(dir, "nowhere.db"))).toBe(false);
  });

  it("bad usage exits 2 with a clear message: another format, an unknown run, a missing flag, no snapshot", async () => {
    const both = await runCli(["export", "--run", "2", "--out", "x", "--sink", "postgres://u@h/db"], { env, cwd: dir });
    expect(both.code).toBe(ExitCode.USAGE);
    expect(both.stderr).toMatch(/--out and --sink: give one/);
    const badSink = await runCli(["export", "--run", "2", "--sink", "warehouse"], { env, cwd: dir });
    expect(badSink.code).toBe(ExitCode.USAGE);
    expect(badSink.stderr).toMatch(/--sink warehouse: not a postgres:\/\/ URL, and no sink by that name/);
    const xml = await runCli(["export", "--run", "2", "--out", "x", "--format", "xml"], { env, cwd: dir });
    expect(xml.code).toBe(ExitCode.USAGE);
    expect(xml.stderr).toMatch(/--format.*expected csv, jsonl or parquet/);
    const unknown = await runCli(["export", "--run", "99", "--out", "x"], { env, cwd: dir });
    expect(unknown.code).toBe(ExitCode.USAGE);
    expect(unknown.stderr).toMatch(/no run 99/);
    expect(unknown.stderr).toMatch(/benefits-sync runs/);
    const noRun = await runCli(["export", "--out", "x"], { env, cwd: dir });
    expect(noRun.code).toBe(ExitCode.USAGE);
    expect(noRun.stderr).toMatch(/--run/);
    const noOut = await runCli(["export", "--run", "1"], { env, cwd: dir });
    expect(noOut.code).toBe(ExitCode.USAGE);
    expect(noOut.stderr).toMatch(/--out/);
    const noDb = await runCli(["export", "--run", "1", "--out", "x"], { env: { ...env, BENEFITS_DB: join(dir, "missing.db") }, cwd: dir });
    expect(noDb.code).toBe(ExitCode.USAGE);
    expect(noDb.stderr).toContain("no snapshot at");
    expect(existsSync(join(dir, "missing.db"))).toBe(false);
    expect(existsSync(join(dir, "x"))).toBe(false);
  });

  it("an --out that cannot be written names the path, the problem and the fix, and exits 1", async () => {
    const file = join(dir, "plain-file");
    writeFileSync(file, "x");
    const r = await runCli(["export", "--run", "1", "--out", join(file, "deltas")], { env, cwd: dir });
    expect(r.code).toBe(ExitCode.RUN_FAILED);
    expect(r.stderr).toContain(file);
    expect(r.stderr).toMatch(/is a file, not a directory/);
    expect(r.stderr).toMatch(/Fix: /);
    expect(r.stderr).not.toMatch(/ENOTDIR|EEXIST/);
    const named = await runCli(["export", "--run", "1", "--out", file], { env, cwd: dir });
    expect(named.code).toBe(ExitCode.RUN_FAILED);
    expect(named.stderr).toMatch(/is a file, not a directory/);
    expect(readFileSync(file, "utf8")).toBe("x");
  });

  it("exporting a delivered run into the directory sync --out delivers to rewrites the same bytes, silently", async () => {
    const out = join(dir, "shared");
    const sync = await runCli(["sync", ...window, "--quiet", "--json", "--out", out], { env, cwd: dir });
    expect(sync.code).toBe(ExitCode.OK);
    // Every run is delivered as its own folder: run 2's is there already.
    const before = readFileSync(join(out, runDir(2), "manifest.json"), "utf8");
    expect(JSON.parse(before)).toMatchObject({ runId: 2, runs: [2] });
    const r = await runCli(["export", "--run", "2", "--out", "shared"], { env, cwd: dir });
    expect(r.code, r.stderr).toBe(ExitCode.OK);
    expect(r.stderr).toBe("");
    expect(readFileSync(join(out, runDir(2), "manifest.json"), "utf8")).toBe(before);
    const alone = await runCli(["export", "--run", "2", "--out", "exports"], { env, cwd: dir });
    expect(alone.stderr).toBe("");
  });
});

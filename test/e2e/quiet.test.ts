/**
 * `--quiet` is for cron, which mails whatever a job prints: on success nothing at all, on stdout
 * or stderr, whatever the run had to say otherwise (a PII key generated, a claims window with no
 * claim, each output delivered: a folder, a config sink's folder, a warehouse). A problem is still
 * printed. Through the built CLI, against the sandbox and a real PostgreSQL.
 */
import { existsSync, mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { startSandbox, type Sandbox } from "../../src/sandbox/index.js";
import { startCli } from "../helpers/cli-process.js";
import { usePostgres } from "../helpers/pg.js";
import { runDir } from "../helpers/run-folders.js";

const pg = usePostgres();
let sb: Sandbox;
let dir: string;

beforeAll(async () => {
  sb = await startSandbox({ members: 80, groups: 2, seed: 8 });
  dir = mkdtempSync(join(tmpdir(), "bsync-quiet-"));
});
afterAll(async () => {
  await sb?.close();
  if (dir) rmSync(dir, { recursive: true, force: true });
});

describe("--quiet prints nothing at all on success", () => {
  it("sync and run JOB, with every output delivered and every notice a run can give", async (ctx) => {
    // Each snapshot its own folder and warehouse: no PII key configured (one is generated beside
    // the snapshot), and a claims window that selects no claim.
    const workspace = async (name: string) => {
      const cwd = mkdtempSync(join(dir, `${name}-`));
      writeFileSync(
        join(cwd, "benefits-sync.config.json"),
        JSON.stringify({ sinks: { warehouse: { type: "postgres", urlEnv: "WH_URL" }, lake: { type: "folder", dir: "lake", format: "parquet" } } }),
      );
      const env = { BENEFITS_BASE_URL: sb.baseUrl, BENEFITS_API_KEY: sb.keys.full, BENEFITS_DB: join(cwd, "snap.db"), WH_URL: await pg.freshDatabase(ctx) };
      return { cwd, env };
    };
    const window = ["--claims-since", "1990-01-01", "--claims-until", "1990-01-31"];
    const l = await workspace("loud");
    const loud = await startCli(["sync", ...window, "--out", "files"], l.env, l.cwd).done;
    expect(loud.code, loud.stderr).toBe(0);
    // The same run without --quiet has all of these to say: the test covers each print path.
    expect(loud.stderr).toContain("generated one at");
    expect(loud.stderr).toContain("selected no claim");
    expect(loud.stdout).toContain("Deltas delivered to");
    expect(loud.stdout).toContain("Deltas: ");

    const { cwd, env } = await workspace("quiet");
    const sync = await startCli(["sync", ...window, "--out", "files", "--quiet"], env, cwd).done;
    expect(sync.code, sync.stderr).toBe(0);
    expect(sync.stdout).toBe("");
    expect(sync.stderr).toBe("");
    expect(existsSync(join(cwd, "files", runDir(1), "manifest.json"))).toBe(true);
    expect(existsSync(join(cwd, "lake", runDir(1), "manifest.json"))).toBe(true);

    await sb.advance();
    const job = await startCli(["--quiet", "run", "nightly-claims-export"], env, cwd).done;
    expect(job.code, job.stderr).toBe(0);
    expect(job.stdout).toBe("");
    expect(job.stderr).toBe("");
    expect(existsSync(join(cwd, "lake", runDir(2), "manifest.json"))).toBe(true);
  });

  it("a problem is still printed, with the notices held back", async () => {
    const cwd = mkdtempSync(join(dir, "p-"));
    const env = { BENEFITS_BASE_URL: sb.baseUrl, BENEFITS_API_KEY: "not-the-key-0000", BENEFITS_DB: join(cwd, "snap.db") };
    const r = await startCli(["sync", "--quiet"], env, cwd).done;
    expect(r.code).toBe(1);
    expect(r.stderr).toContain("answered 401");
    expect(r.stderr).toContain("generated one at");
  });
});

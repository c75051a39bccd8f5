/**
 * The README's partner export: the cron line's note that a new `--out` folder receives every run
 * since run 1 on its first night (members included), and the block that starts a new folder at the
 * next run instead, each line run through `sh -c` as printed with `benefits-sync` on the PATH, in
 * the snapshot's folder, against a sandbox, on a snapshot whose newest run is the one the README
 * names (2).
 */
import { spawn } from "node:child_process";
import { copyFileSync, mkdirSync, mkdtempSync, readdirSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { startSandbox, type Sandbox } from "../../src/sandbox/index.js";
import { startCli } from "../helpers/cli-process.js";
import { installedEnv } from "../helpers/printed-commands.js";
import { readmeBlock, readmeBlocks } from "../helpers/readme-blocks.js";
import { runDir, runFolders } from "../helpers/run-folders.js";

let sb: Sandbox;
let dir: string;
let env: Record<string, string>;
beforeAll(async () => {
  sb = await startSandbox({ members: 40, groups: 2, seed: 8 });
  dir = mkdtempSync(join(tmpdir(), "bsync-readme-partner-"));
  env = { ...installedEnv(dir), BENEFITS_BASE_URL: sb.baseUrl, BENEFITS_PII_KEY: "readme-partner-pii-key-0123456789" };
});
afterAll(async () => {
  await sb?.close();
  if (dir) rmSync(dir, { recursive: true, force: true });
});

// Not spawnSync: the sandbox answers from this very process.
const sh = (line: string, cwd: string, extra: Record<string, string> = {}) =>
  new Promise<{ status: number | null; stdout: string; stderr: string }>((resolve) => {
    const child = spawn("sh", ["-c", line], { cwd, env: { ...env, ...extra }, stdio: ["ignore", "pipe", "pipe"] });
    let stdout = "";
    let stderr = "";
    child.stdout.on("data", (d: Buffer) => (stdout += d.toString()));
    child.stderr.on("data", (d: Buffer) => (stderr += d.toString()));
    child.once("close", (status) => resolve({ status, stdout, stderr }));
  });

describe("README: the partner's nightly claims folder", () => {
  it("a new --out folder gets every run since run 1, members included; --from-run (the newest run plus one) starts one at the next run, recorded", async () => {
    // A snapshot of 2 runs: a first sync of everything, then a night of groups.
    const home = join(dir, "home");
    mkdirSync(home);
    const key = { BENEFITS_API_KEY: sb.keys.full };
    for (let run = 1; run <= 2; run++) {
      const r = await startCli(["sync", "--quiet", ...(run === 1 ? [] : ["--resources", "groups"])], { ...env, ...key }, home).done;
      expect(r.code, r.stderr).toBe(0);
      await sb.advance();
    }
    // The same snapshot, for the cron line as printed (it reads the key from api-key).
    const night = join(dir, "night");
    mkdirSync(night);
    for (const f of readdirSync(home)) copyFileSync(join(home, f), join(night, f));
    writeFileSync(join(night, "api-key"), `${sb.keys.full}\n`, { mode: 0o600 });

    const cron = readmeBlocks("deploy/benefits-sync.cron")
      .flat()
      .find((l) => l.includes(" sync --resources groups,claims "));
    const command = /^(?:\S+\s+){5}(.*)$/.exec(cron!)![1]!;
    expect(command).toContain(" --out claims-deltas ");
    const first = await sh(command, dir, { BENEFITS_SYNC_HOME: night });
    expect(first.status, readFileSync(join(night, "claims.log"), "utf8")).toBe(0);
    expect(runFolders(join(night, "claims-deltas"))).toEqual([1, 2, 3]);
    const members = readFileSync(join(night, "claims-deltas", runDir(1), "members.csv"), "utf8").trim().split("\n");
    expect(members.length).toBeGreaterThan(1);

    // The README's start at the next run, as printed.
    const [runs, start, ...more] = readmeBlock("partner: a new folder from the next run on");
    expect(more).toEqual([]);
    const newest = await sh(runs!, home, key);
    expect(newest.status, newest.stderr).toBe(0);
    const rows = newest.stdout.trim().split("\n").slice(1);
    expect(rows).toHaveLength(1);
    const latest = Number(rows[0]!.split(/\s+/)[0]);
    expect(latest).toBe(2);
    expect(start).toContain(` --from-run ${latest + 1} `);
    const started = await sh(start!, home, key);
    expect(started.status, started.stderr).toBe(0);
    expect(runFolders(join(home, "claims-deltas"))).toEqual([3]);
    // Recorded: the cron line's command, with no --from-run, sends the next night's run alone.
    writeFileSync(join(home, "api-key"), `${sb.keys.full}\n`, { mode: 0o600 });
    await sb.advance();
    const next = await sh(command, dir, { BENEFITS_SYNC_HOME: home });
    expect(next.status, readFileSync(join(home, "claims.log"), "utf8")).toBe(0);
    expect(runFolders(join(home, "claims-deltas"))).toEqual([3, 4]);
    // A different start is refused.
    const other = await sh(start!.replace(` --from-run ${latest + 1} `, " --from-run 2 "), home, key);
    expect(other.status).toBe(2);
    expect(other.stderr).toMatch(/--from-run 2/);
  });
});

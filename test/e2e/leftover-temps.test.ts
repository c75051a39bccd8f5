/**
 * Hidden folders a killed delivery left (issue 37: five `kill -9`s of `export` left five
 * `.1.tmp-*` folders that no later run removed), with the built CLI against the sandbox. Each
 * write is stopped at a point seen in the file system (test/helpers/stop-mid-write.cjs: the process
 * stops itself once `members.csv` is fsynced in its hidden folder), then killed, or left stopped
 * while another process delivers to the same folder.
 */
import { createHash } from "node:crypto";
import { existsSync, mkdirSync, mkdtempSync, readdirSync, readFileSync, rmSync, utimesSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { dirname, join } from "node:path";
import { fileURLToPath } from "node:url";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { startSandbox, type Sandbox } from "../../src/sandbox/index.js";
import { startCli, type CliRun } from "../helpers/cli-process.js";
import { folderFiles, runDir, runFolders } from "../helpers/run-folders.js";
import { ALL_CLAIMS } from "../helpers/sandbox-truth.js";
import { waitUntil } from "../helpers/wait.js";

const HOOK = join(dirname(fileURLToPath(import.meta.url)), "..", "helpers", "stop-mid-write.cjs");
let sb: Sandbox;
let cwd: string;
let env: Record<string, string>;

beforeAll(async () => {
  sb = await startSandbox({ members: 120, groups: 2, seed: 41 });
  cwd = mkdtempSync(join(tmpdir(), "bsync-leftovers-"));
  env = { BENEFITS_BASE_URL: sb.baseUrl, BENEFITS_API_KEY: sb.keys.full, BENEFITS_DB: join(cwd, "snap.db"), BENEFITS_PII_KEY: "leftovers-test-pii-key-0123456789" };
  for (let i = 0; i < 3; i++) {
    if (i) await sb.advance();
    const r = await startCli(["sync", "--claims-since", ALL_CLAIMS.from, "--claims-until", ALL_CLAIMS.to, "--quiet"], env, cwd).done;
    expect(r.code, r.stderr).toBe(0);
  }
});
afterAll(async () => {
  await sb?.close();
  if (cwd) rmSync(cwd, { recursive: true, force: true });
});

const cli = async (...args: string[]) => {
  const r = await startCli(args, env, cwd).done;
  return { ...r, code: r.code ?? -1 };
};

/** Whether process `pid` is stopped (state T in /proc). */
const stopped = (pid: number): boolean => {
  try {
    const stat = readFileSync(`/proc/${pid}/stat`, "utf8");
    return stat.slice(stat.lastIndexOf(")") + 2).startsWith("T");
  } catch {
    return false;
  }
};

/** The hidden entries of `dir`. */
const hidden = (dir: string): string[] => readdirSync(dir).filter((n) => n.startsWith(".")).sort();

/** `export --run N --out DIR`, stopped once members.csv is written in its hidden folder; returns it with that folder. */
async function exportStoppedMidWrite(run: number, out: string): Promise<{ cli: CliRun; tmp: string }> {
  const before = existsSync(join(cwd, out)) ? hidden(join(cwd, out)) : [];
  const p = startCli(["export", "--run", String(run), "--out", out, "--quiet"], { ...env, NODE_OPTIONS: `--require ${HOOK}`, STOP_AFTER_FILE: "members.csv" }, cwd);
  let exited = false;
  void p.done.then(() => (exited = true));
  await waitUntil(`export --run ${run} to stop after writing members.csv in its hidden folder`, () => exited || stopped(p.child.pid!));
  expect(exited, "the export finished instead of stopping mid-write").toBe(false);
  const tmp = hidden(join(cwd, out)).filter((n) => !before.includes(n));
  expect(tmp).toHaveLength(1);
  expect(tmp[0]).toMatch(new RegExp(`^\\.${run}\\.tmp-`));
  expect(existsSync(join(cwd, out, tmp[0]!, "members.csv"))).toBe(true);
  return { cli: p, tmp: tmp[0]! };
}

async function kill9(p: CliRun): Promise<void> {
  p.child.kill("SIGKILL");
  expect((await p.done).signal).toBe("SIGKILL");
}

/** A run folder is complete: its files are the manifest's, each with the SHA-256 it records. */
function expectComplete(folder: string): void {
  const m = JSON.parse(readFileSync(join(folder, "manifest.json"), "utf8")) as { files: { file: string; sha256: string }[] };
  expect(readdirSync(folder).sort()).toEqual([...m.files.map((f) => f.file), "manifest.json"].sort());
  for (const f of m.files) expect(createHash("sha256").update(readFileSync(join(folder, f.file))).digest("hex"), f.file).toBe(f.sha256);
}

describe("leftovers of a killed delivery", () => {
  it("kill -9 of export mid-write, twice: the next export clears both (and an old version's leftover an hour still), and its folder is complete; the same for sync --out", async () => {
    for (let i = 0; i < 2; i++) await kill9((await exportStoppedMidWrite(1, "X")).cli);
    // What an older version named its hidden folder, untouched for two hours.
    const old = join(cwd, "X", ".1.tmp-Ab12Cd");
    mkdirSync(old);
    writeFileSync(join(old, "members.csv"), "op,run_id,id\n");
    const past = new Date(Date.now() - 2 * 60 * 60 * 1000);
    utimesSync(join(old, "members.csv"), past, past);
    utimesSync(old, past, past);
    // The second export cleared the first one's leftover as it started; its own is left.
    expect(hidden(join(cwd, "X"))).toHaveLength(2);

    const again = await cli("export", "--run", "1", "--out", "X", "--quiet");
    expect(again.code, again.stderr).toBe(0);
    expect(hidden(join(cwd, "X"))).toEqual([]);
    expectComplete(join(cwd, "X", runDir(1)));
    expect((await cli("export", "--run", "1", "--out", "other", "--quiet")).code).toBe(0);
    expect(folderFiles(join(cwd, "X", runDir(1)))).toEqual(folderFiles(join(cwd, "other", runDir(1))));

    // A sync delivering to the folder clears a killed export's leftover too.
    await kill9((await exportStoppedMidWrite(2, "X")).cli);
    const sync = await cli("sync", "--claims-since", ALL_CLAIMS.from, "--claims-until", ALL_CLAIMS.to, "--quiet", "--out", "X");
    expect(sync.code, sync.stderr).toBe(0);
    expect(hidden(join(cwd, "X"))).toEqual([]);
    expect(runFolders(join(cwd, "X"))).toEqual([1, 2, 3, 4]);
    for (const n of [1, 2, 3, 4]) expectComplete(join(cwd, "X", runDir(n)));
  });

  it("kill -9 of export --state mid-write: the next state export (or a delivery to the folder) clears its hidden folder; a live one's stays", async () => {
    const stoppedState = async (kind: "state" | "history", out: string) => {
      const before = existsSync(join(cwd, out)) ? hidden(join(cwd, out)) : [];
      const p = startCli(["export", `--${kind}`, "--run", "2", "--out", out, "--format", "parquet", "--quiet"], { ...env, NODE_OPTIONS: `--require ${HOOK}`, STOP_AFTER_FILE: "members.parquet" }, cwd);
      let exited = false;
      void p.done.then(() => (exited = true));
      await waitUntil(`export --${kind} to stop after writing members.parquet in its hidden folder`, () => exited || stopped(p.child.pid!));
      expect(exited, "the export finished instead of stopping mid-write").toBe(false);
      const tmp = hidden(join(cwd, out)).filter((n) => !before.includes(n));
      expect(tmp).toEqual([expect.stringMatching(new RegExp(`^\\.${kind}-00000002\\.tmp-[0-9a-f]{8}-${p.child.pid}-`))]);
      return { cli: p, tmp: tmp[0]! };
    };
    await kill9((await stoppedState("state", "S")).cli);
    const live = await stoppedState("history", "S");
    const again = await cli("export", "--state", "--run", "2", "--out", "S", "--format", "parquet", "--quiet");
    expect(again.code, again.stderr).toBe(0);
    // The killed export's folder is gone; the stopped (live) one's is kept.
    expect(hidden(join(cwd, "S"))).toEqual([live.tmp]);
    expect(existsSync(join(cwd, "S", "state-00000002", "manifest.json"))).toBe(true);
    await kill9(live.cli);
    // A delivery of run folders to the same folder clears a dead state export's leftover too.
    const sync = await cli("export", "--run", "1", "--out", "S", "--quiet");
    expect(sync.code, sync.stderr).toBe(0);
    expect(hidden(join(cwd, "S"))).toEqual([]);
  });

  it("a delivery to a folder another live process is writing leaves that process's hidden folder (and a recent one it cannot check), clears a dead one's; the other then finishes whole", async () => {
    const live = await exportStoppedMidWrite(2, "Z");
    const dead = await exportStoppedMidWrite(1, "Z");
    await kill9(dead.cli);
    // An older version's hidden folder, just written: its writer may be alive.
    const recent = join(cwd, "Z", ".3.tmp-Qq1Qq1");
    mkdirSync(recent);
    writeFileSync(join(recent, "members.csv"), "op,run_id,id\n");
    const members = readFileSync(join(cwd, "Z", live.tmp, "members.csv"));

    const other = await cli("export", "--run", "3", "--out", "Z", "--quiet");
    expect(other.code, other.stderr).toBe(0);
    expect(hidden(join(cwd, "Z"))).toEqual([live.tmp, ".3.tmp-Qq1Qq1"].sort());
    expect(readFileSync(join(cwd, "Z", live.tmp, "members.csv"))).toEqual(members);
    expectComplete(join(cwd, "Z", runDir(3)));

    live.cli.child.kill("SIGCONT");
    const done = await live.cli.done;
    expect(done.code, done.stderr).toBe(0);
    expect(hidden(join(cwd, "Z"))).toEqual([".3.tmp-Qq1Qq1"]);
    expect(runFolders(join(cwd, "Z"))).toEqual([2, 3]);
    expectComplete(join(cwd, "Z", runDir(2)));
  });
});

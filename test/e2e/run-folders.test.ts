/**
 * One run, one folder, with the built CLI against the sandbox: `sync --out DIR` leaves `DIR/N/`
 * holding exactly run N's changes, byte-identical to `export --run N --out OTHER`, whether the
 * output is new on an old snapshot, catches up after a failed delivery, or starts later on
 * purpose (`--from-run N`, or `fromRun` in a configured sink).
 */
import { mkdtempSync, renameSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { startSandbox, type Sandbox } from "../../src/sandbox/index.js";
import { startCli } from "../helpers/cli-process.js";
import { folderFiles, runDir, runFolders } from "../helpers/run-folders.js";
import { ALL_CLAIMS } from "../helpers/sandbox-truth.js";

let sb: Sandbox;
let dir: string;
const window = ["--claims-since", ALL_CLAIMS.from, "--claims-until", ALL_CLAIMS.to];

beforeAll(async () => {
  sb = await startSandbox({ members: 80, groups: 2, seed: 31 });
  dir = mkdtempSync(join(tmpdir(), "bsync-folders-"));
});
afterAll(async () => {
  await sb?.close();
  if (dir) rmSync(dir, { recursive: true, force: true });
});

function setup(name: string) {
  const cwd = mkdtempSync(join(dir, `${name}-`));
  const env = { BENEFITS_BASE_URL: sb.baseUrl, BENEFITS_API_KEY: sb.keys.full, BENEFITS_DB: join(cwd, "snap.db"), BENEFITS_PII_KEY: "run-folders-test-pii-key-0123456789" };
  const cli = async (...args: string[]) => {
    const r = await startCli(args, env, cwd).done;
    return { ...r, code: r.code ?? -1 };
  };
  const sync = async (...extra: string[]) => {
    await sb.advance();
    return cli("sync", ...window, "--json", "--quiet", ...extra);
  };
  /** Each folder of `out` equals `export --run N --out` of the same run, file for file. */
  const expectEachIsItsExport = async (out: string) => {
    for (const n of runFolders(join(cwd, out))) {
      const other = `export-${out}`;
      const e = await cli("export", "--run", String(n), "--out", other, "--quiet");
      expect(e.code, e.stderr).toBe(0);
      expect(folderFiles(join(cwd, out, runDir(n))), `${out}/${n}`).toEqual(folderFiles(join(cwd, other, runDir(n))));
    }
  };
  return { cwd, cli, sync, expectEachIsItsExport };
}

describe("sync --out DIR: one run, one folder", () => {
  it("a new folder on a snapshot with runs 1..3 gets 1/, 2/, 3/ and the new run's 4/, each equal to export --run N", async () => {
    const t = setup("new");
    for (let i = 0; i < 3; i++) expect((await t.sync()).code).toBe(0);
    const r = await t.sync("--out", "deltas");
    expect(r.code, r.stderr).toBe(0);
    expect(runFolders(join(t.cwd, "deltas"))).toEqual([1, 2, 3, 4]);
    await t.expectEachIsItsExport("deltas");
  });

  it("a failed delivery night, then the night after writes the missed folder and its own, each equal to export --run N", async () => {
    const t = setup("catchup");
    expect((await t.sync("--out", "deltas")).code).toBe(0);
    // The output directory replaced by a file for one night: the delivery fails, the run stands.
    renameSync(join(t.cwd, "deltas"), join(t.cwd, "deltas.away"));
    writeFileSync(join(t.cwd, "deltas"), "not a directory\n");
    const failed = await t.sync("--out", "deltas");
    expect(failed.code).toBe(1);
    expect(failed.stderr).toMatch(/stay pending/);
    rmSync(join(t.cwd, "deltas"));
    renameSync(join(t.cwd, "deltas.away"), join(t.cwd, "deltas"));
    const after = await t.sync("--out", "deltas");
    expect(after.code, after.stderr).toBe(0);
    expect(runFolders(join(t.cwd, "deltas"))).toEqual([1, 2, 3]);
    await t.expectEachIsItsExport("deltas");
  });

  it("--from-run N starts a new folder at run N (recorded: the runs before it are never pending); a start that is no run, or that contradicts what the folder has, exits 2 and changes nothing", async () => {
    const t = setup("from");
    for (let i = 0; i < 3; i++) expect((await t.sync()).code).toBe(0);
    const unknown = await t.sync("--out", "deltas", "--from-run", "9");
    expect(unknown.code).toBe(2);
    expect(unknown.stderr).toMatch(/--from-run 9: no run 9 in this snapshot/);
    expect(runFolders(join(t.cwd, "deltas"))).toEqual([]);
    // The refused sync recorded no run: this one is run 4.
    const first = await t.sync("--out", "deltas", "--from-run", "3");
    expect(first.code, first.stderr).toBe(0);
    expect(runFolders(join(t.cwd, "deltas"))).toEqual([3, 4]);
    // The same start again (as a cron line repeats it) is fine; the next night is run 5 alone.
    const again = await t.sync("--out", "deltas", "--from-run", "3");
    expect(again.code, again.stderr).toBe(0);
    expect((JSON.parse(again.stdout.trim().split("\n").pop()!) as { delivery: { runs: number[] } }).delivery.runs).toEqual([5]);
    expect(runFolders(join(t.cwd, "deltas"))).toEqual([3, 4, 5]);
    await t.expectEachIsItsExport("deltas");
    // Another start for the same folder contradicts what it received: refused before the run.
    const contra = await t.sync("--out", "deltas", "--from-run", "2");
    expect(contra.code).toBe(2);
    expect(contra.stderr).toMatch(/was started at run 3/);
    expect(runFolders(join(t.cwd, "deltas"))).toEqual([3, 4, 5]);
    // A configured folder sink takes the same key; export --from-run M --run N writes M..N.
    writeFileSync(join(t.cwd, "benefits-sync.config.json"), JSON.stringify({ sinks: { lake: { type: "folder", dir: "lake", fromRun: 5 } } }));
    const lake = await t.sync();
    expect(lake.code, lake.stderr).toBe(0);
    expect(runFolders(join(t.cwd, "lake"))).toEqual([5, 6]);
    await t.expectEachIsItsExport("lake");
    const range = await t.cli("export", "--run", "4", "--from-run", "2", "--out", "range", "--quiet");
    expect(range.code, range.stderr).toBe(0);
    expect(runFolders(join(t.cwd, "range"))).toEqual([2, 3, 4]);
  });
});

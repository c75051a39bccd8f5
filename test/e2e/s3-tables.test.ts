/**
 * The table layout on S3 (`--out s3://... --layout tables`, an s3 sink's `"layout": "tables"`), with
 * the built CLI against the sandbox and a real S3 server on loopback (test/helpers/s3-server.ts):
 * the same objects, byte for byte, as the local table layout of the same runs (which
 * test/e2e/lake.test.ts reads with DuckDB), each run's `_manifests/<run>.json` uploaded after all of
 * its files, and a kill -9 mid-upload leaving no manifest, the next sync completing the run.
 */
import { createHash } from "node:crypto";
import { readdirSync, readFileSync, rmSync, statSync, writeFileSync, mkdtempSync } from "node:fs";
import { tmpdir } from "node:os";
import { join, relative, sep } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { startSandbox, type Sandbox } from "../../src/sandbox/index.js";
import { startCli } from "../helpers/cli-process.js";
import { runDir } from "../helpers/run-folders.js";
import { startS3Server, type S3TestServer } from "../helpers/s3-server.js";
import { ALL_CLAIMS } from "../helpers/sandbox-truth.js";

let sb: Sandbox;
let s3: S3TestServer;
let dir: string;
const window = ["--claims-since", ALL_CLAIMS.from, "--claims-until", ALL_CLAIMS.to];

beforeAll(async () => {
  sb = await startSandbox({ members: 60, groups: 2, seed: 41 });
  s3 = await startS3Server(["lake"]);
  dir = mkdtempSync(join(tmpdir(), "bsync-s3-tables-"));
});
afterAll(async () => {
  await sb?.close();
  await s3?.close();
  if (dir) rmSync(dir, { recursive: true, force: true });
});

function setup(name: string) {
  const cwd = mkdtempSync(join(dir, `${name}-`));
  const env = { BENEFITS_BASE_URL: sb.baseUrl, BENEFITS_API_KEY: sb.keys.full, BENEFITS_DB: join(cwd, "snap.db"), BENEFITS_PII_KEY: "s3-tables-test-pii-key-012345678", ...s3.env };
  const start = (args: string[]) => startCli(args, env, cwd);
  const cli = async (args: string[]) => {
    const r = await start(args).done;
    return { ...r, code: r.code ?? -1 };
  };
  const config = (sinks: object) => writeFileSync(join(cwd, "benefits-sync.config.json"), JSON.stringify({ sinks }));
  return { cwd, start, cli, config };
}

/** Every file under `root` that is not hidden (a path with no segment starting with "."): path -> SHA-256. */
function localTree(root: string): Record<string, string> {
  const out: Record<string, string> = {};
  const walk = (d: string): void => {
    for (const name of readdirSync(d)) {
      if (name.startsWith(".")) continue;
      const p = join(d, name);
      if (statSync(p).isDirectory()) walk(p);
      else out[relative(root, p).split(sep).join("/")] = createHash("sha256").update(readFileSync(p)).digest("hex");
    }
  };
  walk(root);
  return out;
}

async function s3Tree(prefix: string): Promise<Record<string, string>> {
  const out: Record<string, string> = {};
  for (const key of await s3.keys("lake", `${prefix}/`)) out[key.slice(prefix.length + 1)] = createHash("sha256").update(await s3.object("lake", key)).digest("hex");
  // The prefix's claim (src/sinks/s3/s3-claim.ts), which a local folder has no need of.
  expect(out).toHaveProperty("_owner.json");
  delete out["_owner.json"];
  return out;
}

describe("the table layout on s3://", () => {
  it("a sync's s3 tables sink and --out DIR --layout tables get the same files; each run's manifest is uploaded after its files; export --layout tables to s3:// gives the same bytes", async () => {
    const t = setup("same");
    t.config({ lake: { type: "s3", url: "s3://lake/same", format: "parquet", layout: "tables", endpoint: s3.endpoint, forcePathStyle: true, region: "us-east-1" } });
    for (const run of [1, 2]) {
      await sb.advance();
      const before = s3.requests.length;
      const r = await t.cli(["sync", ...window, "--out", "local", "--layout", "tables", "--quiet"]);
      expect(r.code, r.stderr).toBe(0);
      expect(r.stderr).toBe("");
      const puts = s3.requests.slice(before).filter((q) => q.method === "PUT" && q.path.startsWith("/lake/same/") && !q.path.endsWith("/_owner.json"));
      expect(puts.at(-1)!.path).toBe(`/lake/same/_manifests/${runDir(run)}.json`);
      expect(puts.filter((q) => q.path.includes("_manifests/"))).toHaveLength(1);
      expect(puts.some((q) => q.path.includes(`/members/run_id=${runDir(run)}/part-00000.parquet`))).toBe(true);
    }
    const local = localTree(join(t.cwd, "local"));
    expect(Object.keys(local)).toContain(`_manifests/${runDir(2)}.json`);
    expect(await s3Tree("same")).toEqual(local);
    const e = await t.cli(["export", "--run", "2", "--out", "s3://lake/exported", "--layout", "tables", "--quiet"]);
    expect(e.code, e.stderr).toBe(0);
    const run2 = Object.fromEntries(Object.entries(local).filter(([k]) => k.includes(runDir(2))));
    expect(await s3Tree("exported")).toEqual(run2);
  });

  it("kill -9 while a run's first file is uploading leaves no manifest; the next sync uploads that run whole, then the next", async () => {
    const t = setup("kill");
    const hold = s3.hold((q) => q.method === "PUT" && q.path.startsWith("/lake/kill/") && !q.path.endsWith("/_owner.json"));
    await sb.advance();
    const child = t.start(["sync", ...window, "--out", "s3://lake/kill", "--layout", "tables", "--quiet"]);
    const exited = child.done;
    await Promise.race([hold.held, exited.then((x) => Promise.reject(new Error(`sync exited before its first upload: ${x.stderr}`)))]);
    child.child.kill("SIGKILL");
    expect((await exited).signal).toBe("SIGKILL");
    hold.release();
    expect((await s3.keys("lake", "kill/")).filter((k) => k.includes("_manifests/"))).toEqual([]);
    await sb.advance();
    const next = await t.cli(["sync", ...window, "--out", "s3://lake/kill", "--layout", "tables", "--quiet"]);
    expect(next.code, next.stderr).toBe(0);
    expect((await s3.keys("lake", "kill/")).filter((k) => k.includes("_manifests/"))).toEqual([`kill/_manifests/${runDir(1)}.json`, `kill/_manifests/${runDir(2)}.json`]);
    // Run 1, begun by the killed process, is whole: the same bytes as its local export.
    const ex = await t.cli(["export", "--run", "1", "--out", "exported", "--layout", "tables", "--quiet"]);
    expect(ex.code, ex.stderr).toBe(0);
    const uploaded = await s3Tree("kill");
    expect(Object.fromEntries(Object.entries(uploaded).filter(([k]) => k.includes(runDir(1))))).toEqual(localTree(join(t.cwd, "exported")));
  });

  it("an s3 sink with the table layout in CSV is refused (exit 2) naming the setting", async () => {
    const t = setup("csv");
    t.config({ lake: { type: "s3", url: "s3://lake/csv", format: "csv", layout: "tables", endpoint: s3.endpoint, forcePathStyle: true } });
    const r = await t.cli(["sync", ...window]);
    expect(r.code).toBe(2);
    expect(r.stderr).toMatch(/sinks\.lake\.layout: the table layout is written as Parquet, not csv/);
    expect(await s3.keys("lake", "csv/")).toEqual([]);
  });
});

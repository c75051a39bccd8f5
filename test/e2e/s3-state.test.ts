/**
 * `export --state` and `--history` to `s3://bucket/prefix`, with the built CLI against the sandbox
 * and a real S3 server on loopback (test/helpers/s3-server.ts): the same files, byte for byte, as
 * the same export to a local folder (which state-export.test.ts reads back with DuckDB), the
 * manifest uploaded after them; a missing bucket exits 2 and a --layout is refused.
 */
import { createHash } from "node:crypto";
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { startSandbox, type Sandbox } from "../../src/sandbox/index.js";
import { startCli } from "../helpers/cli-process.js";
import { folderFiles } from "../helpers/run-folders.js";
import { startS3Server, type S3TestServer } from "../helpers/s3-server.js";
import { ALL_CLAIMS } from "../helpers/sandbox-truth.js";

let sb: Sandbox;
let s3: S3TestServer;
let cwd: string;
const cli = async (args: string[]) => {
  const env = { BENEFITS_BASE_URL: sb.baseUrl, BENEFITS_API_KEY: sb.keys.full, BENEFITS_DB: join(cwd, "snap.db"), BENEFITS_PII_KEY: "s3-state-test-pii-key-0123456789", ...s3.env };
  const r = await startCli(args, env, cwd).done;
  return { ...r, code: r.code ?? -1 };
};

beforeAll(async () => {
  sb = await startSandbox({ members: 50, groups: 2, seed: 43 });
  s3 = await startS3Server(["lake"]);
  cwd = mkdtempSync(join(tmpdir(), "bsync-s3-state-"));
  for (let i = 0; i < 2; i++) {
    await sb.advance();
    const r = await cli(["sync", "--claims-since", ALL_CLAIMS.from, "--claims-until", ALL_CLAIMS.to, "--quiet"]);
    if (r.code !== 0) throw new Error(`sync ${i + 1} failed: ${r.stderr}`);
  }
});
afterAll(async () => {
  await sb?.close();
  await s3?.close();
  if (cwd) rmSync(cwd, { recursive: true, force: true });
});

async function s3Folder(prefix: string): Promise<Record<string, string>> {
  const out: Record<string, string> = {};
  for (const key of await s3.keys("lake", `${prefix}/`)) out[key.slice(prefix.length + 1)] = createHash("sha256").update(await s3.object("lake", key)).digest("hex");
  return out;
}

describe("export --state / --history --out s3://", () => {
  it.each(["state", "history"] as const)("--%s: the local export's bytes under prefix/<kind>-<run>/, the manifest uploaded last", async (kind) => {
    const local = await cli(["export", `--${kind}`, "--run", "1", "--out", "local", "--format", "parquet", "--quiet"]);
    expect(local.code, local.stderr).toBe(0);
    const before = s3.requests.length;
    const up = await cli(["export", `--${kind}`, "--run", "1", "--out", `s3://lake/${kind}`, "--format", "parquet"]);
    expect(up.code, up.stderr).toBe(0);
    expect(up.stdout).toContain(`s3://lake/${kind}/${kind}-00000001`);
    const files = folderFiles(join(cwd, "local", `${kind}-00000001`));
    expect(Object.keys(files)).toContain("members.parquet");
    expect(await s3Folder(`${kind}/${kind}-00000001`)).toEqual(files);
    const puts = s3.requests.slice(before).filter((q) => q.method === "PUT");
    expect(puts.at(-1)!.path).toBe(`/lake/${kind}/${kind}-00000001/manifest.json`);
  });

  it("a missing bucket exits 2 naming it; --layout is refused (exit 2) with --state", async () => {
    const missing = await cli(["export", "--state", "--out", "s3://no-such-bucket/x"]);
    expect(missing.code, missing.stderr).toBe(2);
    expect(missing.stderr).toMatch(/no-such-bucket/);
    const layout = await cli(["export", "--state", "--out", "s3://lake/x", "--layout", "tables"]);
    expect(layout.code).toBe(2);
    expect(layout.stderr).toMatch(/--layout: --state writes one folder/);
    expect(await s3.keys("lake", "x/")).toEqual([]);
  });
});

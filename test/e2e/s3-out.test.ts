/**
 * `s3://bucket/prefix` as an output, with the built CLI against the sandbox and a real S3 server
 * on loopback (s3rver behind the shim of test/helpers/s3-server.ts), driven by the real AWS SDK:
 * the same run folders and bytes as a local folder, the manifest uploaded last, kill -9
 * mid-upload, wrong credentials, an endpoint nobody answers, a missing bucket, a bucket refused for
 * want of encryption, a prefix that belongs to another snapshot.
 */
import { createHash } from "node:crypto";
import { mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { startSandbox, type Sandbox } from "../../src/sandbox/index.js";
import { startCli } from "../helpers/cli-process.js";
import { folderFiles, runDir } from "../helpers/run-folders.js";
import { closedPort } from "../helpers/ports.js";
import { startS3Server, type S3TestServer } from "../helpers/s3-server.js";
import { ALL_CLAIMS } from "../helpers/sandbox-truth.js";

let sb: Sandbox;
let s3: S3TestServer;
let dir: string;
const window = ["--claims-since", ALL_CLAIMS.from, "--claims-until", ALL_CLAIMS.to];

beforeAll(async () => {
  sb = await startSandbox({ members: 60, groups: 2, seed: 39 });
  s3 = await startS3Server(["lake", "plain", "locked", "odd"], { plain: "none", locked: "AES256" });
  dir = mkdtempSync(join(tmpdir(), "bsync-s3-"));
});
afterAll(async () => {
  await sb?.close();
  await s3?.close();
  if (dir) rmSync(dir, { recursive: true, force: true });
});

function setup(name: string, awsEnv: Record<string, string> = s3.env) {
  const cwd = mkdtempSync(join(dir, `${name}-`));
  const env = { BENEFITS_BASE_URL: sb.baseUrl, BENEFITS_API_KEY: sb.keys.full, BENEFITS_DB: join(cwd, "snap.db"), BENEFITS_PII_KEY: "s3-out-test-pii-key-0123456789", ...awsEnv };
  const start = (args: string[], extraEnv: Record<string, string> = {}) => startCli(args, { ...env, ...extraEnv }, cwd);
  const cli = async (args: string[], extraEnv: Record<string, string> = {}) => {
    const r = await start(args, extraEnv).done;
    return { ...r, code: r.code ?? -1 };
  };
  const sync = async (extra: string[], extraEnv: Record<string, string> = {}) => {
    await sb.advance();
    return cli(["sync", ...window, "--json", ...extra], extraEnv);
  };
  const config = (sinks: object) => writeFileSync(join(cwd, "benefits-sync.config.json"), JSON.stringify({ sinks }));
  return { cwd, cli, sync, start, config };
}

/** The objects of `bucket/prefix/<run>/`: file name -> SHA-256 of its bytes (as folderFiles reads a local folder). */
async function s3Folder(bucket: string, prefix: string, run: number): Promise<Record<string, string>> {
  const out: Record<string, string> = {};
  for (const key of await s3.keys(bucket, `${prefix}/${runDir(run)}/`)) out[key.slice(prefix.length + runDir(run).length + 2)] = createHash("sha256").update(await s3.object(bucket, key)).digest("hex");
  return out;
}

describe("sync and export --out s3://bucket/prefix", () => {
  it("the same run reaches a local folder and an S3 sink with byte-identical files, manifest last; --quiet prints nothing; export --out s3:// gives the same bytes", async () => {
    const t = setup("same");
    t.config({ lake: { type: "s3", url: "s3://lake/same/deltas", format: "csv", endpoint: s3.endpoint, forcePathStyle: true, region: "us-east-1" } });
    const before = s3.requests.length;
    const r = await t.sync(["--out", "local", "--quiet"]);
    expect(r.code, r.stderr).toBe(0);
    expect(r.stderr).toBe("");
    const local = folderFiles(join(t.cwd, "local", runDir(1)));
    expect(Object.keys(local)).toContain("manifest.json");
    expect(await s3Folder("lake", "same/deltas", 1)).toEqual(local);
    // The prefix claimed first (src/sinks/s3/s3-claim.ts), then every data PUT, the manifest's last.
    const puts = s3.requests.slice(before).filter((q) => q.method === "PUT" && q.path.startsWith("/lake/same/deltas/"));
    expect(puts[0]!.path).toBe("/lake/same/deltas/_owner.json");
    expect(puts.at(-1)!.path).toBe(`/lake/same/deltas/${runDir(1)}/manifest.json`);
    expect(puts.length).toBe(Object.keys(local).length + 1);
    const e = await t.cli(["export", "--run", "1", "--out", "s3://lake/same/export", "--quiet"]);
    expect(e.code, e.stderr).toBe(0);
    expect(await s3Folder("lake", "same/export", 1)).toEqual(local);
  });

  it("kill -9 while the first data file is uploading leaves no manifest (no reader sees half a run); the next sync completes the delivery", async () => {
    const t = setup("kill");
    const prefix = "/lake/kill/";
    const hold = s3.hold((q) => q.method === "PUT" && q.path.startsWith(prefix) && !q.path.endsWith("/_owner.json"));
    await sb.advance();
    const child = t.start(["sync", ...window, "--out", "s3://lake/kill", "--quiet"]);
    const exited = child.done;
    await Promise.race([hold.held, exited.then((x) => Promise.reject(new Error(`sync exited before its first upload: ${x.stderr}`)))]);
    child.child.kill("SIGKILL");
    const dead = await exited;
    expect(dead.signal).toBe("SIGKILL");
    hold.release();
    expect((await s3.keys("lake", "kill/")).filter((k) => k.endsWith("manifest.json"))).toEqual([]);
    const next = await t.sync(["--out", "s3://lake/kill"]);
    expect(next.code, next.stderr).toBe(0);
    const manifests = (await s3.keys("lake", "kill/")).filter((k) => k.endsWith("manifest.json"));
    expect(manifests).toEqual([`kill/${runDir(1)}/manifest.json`, `kill/${runDir(2)}/manifest.json`]);
    // The folder the killed process began is complete and equals export --run 1 of a local folder.
    const ex = await t.cli(["export", "--run", "1", "--out", "exported", "--quiet"]);
    expect(ex.code, ex.stderr).toBe(0);
    expect(await s3Folder("lake", "kill", 1)).toEqual(folderFiles(join(t.cwd, "exported", runDir(1))));
  });

  it("wrong credentials: exit 1, the run succeeded and its delivery stays pending, no secret printed; fixed credentials deliver it", async () => {
    const t = setup("creds");
    const secret = "wRoNgSeCrEt0123456789abcdefghijklmnopqrs";
    const bad = await t.sync(["--out", "s3://lake/creds"], { AWS_ACCESS_KEY_ID: "AKIAWRONGWRONGWRONG1", AWS_SECRET_ACCESS_KEY: secret });
    expect(bad.code, bad.stderr).toBe(1);
    expect(JSON.parse(bad.stdout.trim().split("\n").at(-1)!).status).toBe("succeeded");
    expect(bad.stderr).toMatch(/s3:\/\/lake\/creds/);
    expect(bad.stderr).toMatch(/stay pending/);
    expect(bad.stderr + bad.stdout).not.toContain(secret);
    expect(bad.stderr + bad.stdout).not.toContain("AKIAWRONGWRONGWRONG1");
    expect(await s3.keys("lake", "creds/")).toEqual([]);
    const good = await t.sync(["--out", "s3://lake/creds"]);
    expect(good.code, good.stderr).toBe(0);
    expect((await s3.keys("lake", "creds/")).filter((k) => k.endsWith("manifest.json"))).toEqual([`creds/${runDir(1)}/manifest.json`, `creds/${runDir(2)}/manifest.json`]);
  });

  it("an endpoint nobody answers: exit 1 naming the prefix, the run succeeded and its delivery pending; with the endpoint back, the next sync delivers both runs", async () => {
    const t = setup("unreachable");
    const port = await closedPort();
    const down = await t.sync(["--out", "s3://lake/unreachable"], { AWS_ENDPOINT_URL_S3: `http://127.0.0.1:${port}` });
    expect(down.code, down.stderr).toBe(1);
    expect(JSON.parse(down.stdout.trim().split("\n").at(-1)!).status).toBe("succeeded");
    expect(down.stderr).toMatch(/the S3 endpoint for s3:\/\/lake\/unreachable could not be reached .*ECONNREFUSED/);
    expect(down.stderr).toMatch(/stay pending/);
    const back = await t.sync(["--out", "s3://lake/unreachable", "--quiet"]);
    expect(back.code, back.stderr).toBe(0);
    expect((await s3.keys("lake", "unreachable/")).filter((k) => k.endsWith("manifest.json"))).toEqual([`unreachable/${runDir(1)}/manifest.json`, `unreachable/${runDir(2)}/manifest.json`]);
  });

  it("one prefix, one snapshot: another snapshot's sync to it exits 2 before its run (none recorded, nothing uploaded), its export and a tables sink too; its own next sync still delivers", async () => {
    const a = setup("owner-a");
    expect((await a.sync(["--out", "s3://lake/owned", "--quiet"])).code).toBe(0);
    expect((await a.cli(["export", "--run", "1", "--out", "s3://lake/owned-tables", "--layout", "tables", "--quiet"])).code).toBe(0);
    const idA = JSON.parse((await s3.object("lake", `owned/${runDir(1)}/manifest.json`)).toString()).snapshotId as string;
    expect(idA).toMatch(/\S/);
    const keys = await s3.keys("lake", "owned");
    const b = setup("owner-b");
    expect((await b.sync(["--out", "s3://lake/elsewhere", "--quiet"])).code).toBe(0);
    const refused = await b.sync(["--out", "s3://lake/owned"]);
    expect(refused.code, refused.stderr).toBe(2);
    expect(refused.stderr).toContain(`s3://lake/owned belongs to snapshot ${idA} (the snapshotId in s3://lake/owned/_owner.json)`);
    expect(refused.stderr).toMatch(/Nothing was written/);
    // Refused before its run: B has its first run only.
    expect(JSON.parse((await b.cli(["runs", "--json"])).stdout).map((r: { run_id: number }) => r.run_id)).toEqual([1]);
    const exported = await b.cli(["export", "--run", "1", "--out", "s3://lake/owned"]);
    expect(exported.code, exported.stderr).toBe(2);
    expect(exported.stderr).toContain(`belongs to snapshot ${idA}`);
    b.config({ lake: { type: "s3", url: "s3://lake/owned-tables", format: "parquet", layout: "tables", endpoint: s3.endpoint, forcePathStyle: true } });
    const tables = await b.sync([]);
    expect(tables.code, tables.stderr).toBe(2);
    expect(tables.stderr).toContain(`s3://lake/owned-tables belongs to snapshot ${idA} (the snapshotId in s3://lake/owned-tables/_owner.json)`);
    expect(await s3.keys("lake", "owned")).toEqual(keys);
    const own = await a.sync(["--out", "s3://lake/owned", "--quiet"]);
    expect(own.code, own.stderr).toBe(0);
    expect((await s3.keys("lake", "owned/")).filter((k) => k.endsWith("manifest.json"))).toEqual([`owned/${runDir(1)}/manifest.json`, `owned/${runDir(2)}/manifest.json`]);
  });

  it("a missing bucket exits 2 naming it; the run itself is recorded succeeded", async () => {
    const t = setup("nobucket");
    const r = await t.sync(["--out", "s3://no-such-bucket/deltas"]);
    expect(r.code, r.stderr).toBe(2);
    expect(r.stderr).toMatch(/bucket "no-such-bucket" does not exist/);
    const runs = await t.cli(["runs", "--json"]);
    expect(runs.stdout).toMatch(/succeeded/);
  });

  it("requireEncryption refuses a bucket without default encryption (exit 2, nothing uploaded), and one whose server cannot say; sse on the sink, or an encrypted bucket, is delivered with SSE on every PUT", async () => {
    const t = setup("enc");
    t.config({ lake: { type: "s3", url: "s3://plain/enc", endpoint: s3.endpoint, forcePathStyle: true, requireEncryption: true } });
    const refused = await t.sync([]);
    expect(refused.code, refused.stderr).toBe(2);
    expect(refused.stderr).toMatch(/bucket "plain" has no default encryption.*requireEncryption/);
    expect(await s3.keys("plain", "enc/")).toEqual([]);
    t.config({ lake: { type: "s3", url: "s3://odd/enc", endpoint: s3.endpoint, forcePathStyle: true, requireEncryption: true } });
    const unknown = await t.sync([]);
    expect(unknown.code, unknown.stderr).toBe(2);
    expect(unknown.stderr).toMatch(/GetBucketEncryption is not implemented/);
    expect(await s3.keys("odd", "enc/")).toEqual([]);
    t.config({ lake: { type: "s3", url: "s3://locked/enc", endpoint: s3.endpoint, forcePathStyle: true, requireEncryption: true } });
    const ok = await t.sync(["--quiet"]);
    expect(ok.code, ok.stderr).toBe(0);
    const before = s3.requests.length;
    t.config({ lake: { type: "s3", url: "s3://plain/enc", endpoint: s3.endpoint, forcePathStyle: true, requireEncryption: true, sse: "AES256" } });
    const sse = await t.sync(["--quiet"]);
    expect(sse.code, sse.stderr).toBe(0);
    const puts = s3.requests.slice(before).filter((q) => q.method === "PUT" && q.path.startsWith("/plain/enc/"));
    expect(puts.length).toBeGreaterThan(0);
    expect(puts.every((q) => q.sse === "AES256")).toBe(true);
  });

  it("a config sink with a credential in it is refused (exit 2) without showing it", async () => {
    const t = setup("cfg");
    t.config({ lake: { type: "s3", url: "s3://lake/cfg", secretAccessKey: "TopSecretValue123" } });
    const r = await t.sync([]);
    expect(r.code).toBe(2);
    expect(r.stderr).toMatch(/sinks\.lake\.secretAccessKey: credentials never go in the config file/);
    expect(r.stderr).not.toContain("TopSecretValue123");
  });
});

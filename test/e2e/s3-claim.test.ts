/**
 * Two snapshots delivering into one new S3 prefix at once, with the built CLI against the sandbox
 * and s3rver behind the shim of test/helpers/s3-server.ts (which honours `If-None-Match: *` on a
 * PUT, as S3 does and s3rver 3.7.1 does not). Both processes are started together; the first data
 * PUT into the prefix is held at the store until the other process has either been refused or
 * sent data of its own, so that the window in which both could pass an owner check is always
 * open, whoever wins. Exactly one must deliver; the other exits 2 naming the winner's snapshot,
 * having uploaded nothing and recorded nothing. Repeated, with `export --out` and `sync --out`.
 */
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import Database from "better-sqlite3";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { startSandbox, type Sandbox } from "../../src/sandbox/index.js";
import { startCli } from "../helpers/cli-process.js";
import { startS3Server, type S3TestServer, type SeenRequest } from "../helpers/s3-server.js";
import { ALL_CLAIMS } from "../helpers/sandbox-truth.js";
import { waitUntil } from "../helpers/wait.js";

let sb: Sandbox;
let s3: S3TestServer;
let dir: string;
const window = ["--claims-since", ALL_CLAIMS.from, "--claims-until", ALL_CLAIMS.to];

beforeAll(async () => {
  sb = await startSandbox({ members: 30, groups: 2, seed: 52 });
  s3 = await startS3Server(["lake"]);
  dir = mkdtempSync(join(tmpdir(), "bsync-s3-claim-"));
});
afterAll(async () => {
  await sb?.close();
  await s3?.close();
  if (dir) rmSync(dir, { recursive: true, force: true });
});

type Name = "A" | "B";

/** A snapshot of its own, whose S3 requests carry `app/NAME` in their user agent. */
function snapshot(name: Name, cwd: string) {
  const db = join(cwd, `${name}.db`);
  const env = { BENEFITS_BASE_URL: sb.baseUrl, BENEFITS_API_KEY: sb.keys.full, BENEFITS_DB: db, BENEFITS_PII_KEY: "s3-claim-test-pii-key-0123456789", ...s3.env, AWS_SDK_UA_APP_ID: name };
  const read = <T>(sql: string, ...params: unknown[]): T[] => {
    const d = new Database(db, { readonly: true });
    try {
      return d.prepare(sql).pluck().all(...params) as T[];
    } finally {
      d.close();
    }
  };
  return {
    name,
    start: (args: string[]) => startCli(args, env, cwd),
    id: () => read<string>("SELECT value FROM _meta WHERE key = 'snapshot_id'")[0]!,
    runs: () => read<number>("SELECT run_id FROM _runs ORDER BY run_id"),
    deliveries: (output: string) => read<string>("SELECT status FROM _deliveries WHERE output = ?", output),
  };
}

/**
 * Start `args(prefix)` for both snapshots at once; hold the first data PUT into the prefix until the
 * other one has exited or sent data too; return both results and who sent that PUT.
 */
async function race(a: ReturnType<typeof snapshot>, b: ReturnType<typeof snapshot>, prefix: string, args: (url: string) => string[]) {
  const isData = (q: SeenRequest) => q.method === "PUT" && q.path.startsWith(`/lake/${prefix}/`) && !q.path.endsWith("/_owner.json");
  const from = (q: SeenRequest): Name => (/app\/A\b/.test(q.agent) ? "A" : "B");
  const hold = s3.hold(isData);
  const runs = { A: a.start(args(`s3://lake/${prefix}`)), B: b.start(args(`s3://lake/${prefix}`)) };
  const exited: Partial<Record<Name, boolean>> = {};
  for (const n of ["A", "B"] as const) void runs[n].done.then(() => (exited[n] = true));
  const first = await Promise.race([hold.held, Promise.all([runs.A.done, runs.B.done]).then(() => undefined)]);
  if (first) expect(first.agent, "the writer is named in its user agent").toMatch(/app\/[AB]\b/);
  const holder = first ? from(first) : undefined;
  if (holder) {
    const other: Name = holder === "A" ? "B" : "A";
    await waitUntil(`${other} to be refused or to upload into ${prefix} too`, () => exited[other] || s3.requests.some((q) => isData(q) && from(q) === other));
  }
  hold.release();
  const [ra, rb] = await Promise.all([runs.A.done, runs.B.done]);
  return { A: ra, B: rb, holder };
}

/** The snapshot ids the committed manifests under `prefix` carry, and the owner object's. */
async function idsIn(prefix: string): Promise<{ manifests: string[]; owner: string | undefined }> {
  const keys = await s3.keys("lake", `${prefix}/`);
  const manifests = new Set<string>();
  for (const k of keys.filter((k) => k.endsWith("/manifest.json") || /\/_manifests\/\d+\.json$/.test(k))) manifests.add(JSON.parse((await s3.object("lake", k)).toString()).snapshotId as string);
  const owner = keys.includes(`${prefix}/_owner.json`) ? (JSON.parse((await s3.object("lake", `${prefix}/_owner.json`)).toString()).snapshotId as string) : undefined;
  return { manifests: [...manifests], owner };
}

describe("two snapshots claiming one new S3 prefix at once", () => {
  it("export --out, started together, 4 times: one delivers, the other exits 2 naming the winner, and the prefix holds only the winner's runs", async () => {
    const cwd = mkdtempSync(join(dir, "export-"));
    const a = snapshot("A", cwd);
    const b = snapshot("B", cwd);
    for (const s of [a, b]) {
      await sb.advance();
      const r = await s.start(["sync", ...window, "--quiet"]).done;
      expect(r.code, r.stderr).toBe(0);
    }
    for (let round = 1; round <= 4; round++) {
      const prefix = `race-export-${round}`;
      const r = await race(a, b, prefix, (url) => ["export", "--run", "1", "--out", url, "--quiet"]);
      expect([r.A.code, r.B.code].sort(), `round ${round}: ${r.A.stderr} | ${r.B.stderr}`).toEqual([0, 2]);
      const [winner, loser] = r.A.code === 0 ? [a, b] : [b, a];
      expect(r[loser.name].stderr).toContain(`s3://lake/${prefix} belongs to snapshot ${winner.id()} (the snapshotId in s3://lake/${prefix}/_owner.json)`);
      expect(r[loser.name].stderr).toMatch(/Nothing was written/);
      expect(await idsIn(prefix)).toEqual({ manifests: [winner.id()], owner: winner.id() });
    }
  });

  it("sync --out of two new snapshots, started together, twice: one delivers; the other exits 2 before its delivery is recorded (no ledger row), its run kept", async () => {
    for (let round = 1; round <= 2; round++) {
      const cwd = mkdtempSync(join(dir, `sync-${round}-`));
      const a = snapshot("A", cwd);
      const b = snapshot("B", cwd);
      const prefix = `race-sync-${round}`;
      await sb.advance();
      const r = await race(a, b, prefix, (url) => ["sync", ...window, "--out", url, "--quiet"]);
      expect([r.A.code, r.B.code].sort(), `round ${round}: ${r.A.stderr} | ${r.B.stderr}`).toEqual([0, 2]);
      const [winner, loser] = r.A.code === 0 ? [a, b] : [b, a];
      expect(r[loser.name].stderr).toContain(`belongs to snapshot ${winner.id()}`);
      expect(loser.deliveries(`csv:s3://lake/${prefix}`)).toEqual([]);
      expect(winner.deliveries(`csv:s3://lake/${prefix}`)).toEqual(["delivered"]);
      expect(loser.runs()).toEqual([1]);
      expect(await idsIn(prefix)).toEqual({ manifests: [winner.id()], owner: winner.id() });
    }
  });

  it("a prefix an older benefits-sync delivered to (manifests, no owner object): another snapshot is refused naming the first manifest; its own snapshot's next delivery claims it", async () => {
    const cwd = mkdtempSync(join(dir, "legacy-"));
    const a = snapshot("A", cwd);
    const b = snapshot("B", cwd);
    await sb.advance();
    expect((await a.start(["sync", ...window, "--out", "s3://lake/legacy", "--quiet"]).done).code).toBe(0);
    await s3.remove("lake", "legacy/_owner.json");
    await sb.advance();
    const refused = await b.start(["sync", ...window, "--out", "s3://lake/legacy"]).done;
    expect(refused.code, refused.stderr).toBe(2);
    expect(refused.stderr).toContain(`s3://lake/legacy belongs to snapshot ${a.id()} (the snapshotId in s3://lake/legacy/00000001/manifest.json)`);
    expect((await idsIn("legacy")).owner).toBeUndefined();
    await sb.advance();
    expect((await a.start(["sync", ...window, "--out", "s3://lake/legacy", "--quiet"]).done).code).toBe(0);
    expect(await idsIn("legacy")).toEqual({ manifests: [a.id()], owner: a.id() });
  });
});

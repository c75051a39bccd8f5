/**
 * Where an S3 delivery stages member data before the upload: in TMPDIR (Node's os.tmpdir()), the
 * folder deploy/kubernetes/ points at a size-limited emptyDir. With the built CLI against the
 * sandbox and a real S3 server on loopback: `sync --out s3://` and `export --state --out s3://`
 * with TMPDIR set make their staging folder there (seen by a watch on it), remove it when done,
 * and clear a dead process's staging folder there.
 */
import { existsSync, mkdirSync, mkdtempSync, readdirSync, rmSync, watch, writeFileSync, type FSWatcher } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { startSandbox, type Sandbox } from "../../src/sandbox/index.js";
import { STAGE } from "../../src/sinks/s3/s3-sink.js";
import { processAlive } from "../../src/store/runs/run-lease.js";
import { startCli } from "../helpers/cli-process.js";
import { runDir } from "../helpers/run-folders.js";
import { startS3Server, type S3TestServer } from "../helpers/s3-server.js";
import { ALL_CLAIMS } from "../helpers/sandbox-truth.js";

let sb: Sandbox;
let s3: S3TestServer;
let dir: string;
beforeAll(async () => {
  sb = await startSandbox({ members: 40, groups: 2, seed: 51 });
  s3 = await startS3Server(["lake"]);
  dir = mkdtempSync(join(tmpdir(), "bsync-s3-staging-"));
});
afterAll(async () => {
  await sb?.close();
  await s3?.close();
  if (dir) rmSync(dir, { recursive: true, force: true });
});

/** The names created directly in `folder` while it is watched. */
function created(folder: string): { names: Set<string>; stop: () => void } {
  const names = new Set<string>();
  const w: FSWatcher = watch(folder, (_, name) => name && names.add(String(name)));
  return { names, stop: () => w.close() };
}

/** A pid no process has, for a dead writer's staging folder. */
function deadPid(): number {
  for (let pid = 4_000_000; ; pid--) if (!processAlive(pid)) return pid;
}

describe("S3 deliveries stage in TMPDIR", () => {
  it("sync and export --state --out s3:// stage there, leave nothing behind there, and clear a dead writer's stage there", async () => {
    const stage = join(dir, "stage");
    mkdirSync(stage);
    const dead = join(stage, `${STAGE}${deadPid()}-AbCd12`);
    mkdirSync(dead);
    writeFileSync(join(dead, "members.csv"), "op,id\r\n");
    const env = {
      BENEFITS_BASE_URL: sb.baseUrl,
      BENEFITS_API_KEY: sb.keys.full,
      BENEFITS_DB: join(dir, "snap.db"),
      BENEFITS_PII_KEY: "s3-staging-test-pii-key-0123456789",
      TMPDIR: stage,
      ...s3.env,
    };
    const seen = created(stage);
    try {
      const sync = startCli(["sync", "--claims-since", ALL_CLAIMS.from, "--claims-until", ALL_CLAIMS.to, "--out", "s3://lake/staged", "--quiet"], env, dir);
      const r = await sync.done;
      expect(r.code, r.stderr).toBe(0);
      const state = await startCli(["export", "--state", "--run", "1", "--out", "s3://lake/state", "--quiet"], env, dir).done;
      expect(state.code, state.stderr).toBe(0);
      expect(await s3.keys("lake", `staged/${runDir(1)}/`)).toContain(`staged/${runDir(1)}/manifest.json`);
      expect((await s3.keys("lake", "state/")).length).toBeGreaterThan(0);
      // Each command's own staging folder was made in TMPDIR, and removed when it was done.
      const own = [...seen.names].filter((n) => n.startsWith(STAGE) && n !== dead.slice(stage.length + 1));
      expect(own.length).toBeGreaterThanOrEqual(2);
      expect(own.every((n) => new RegExp(`^${STAGE}\\d+-[A-Za-z0-9]{6}$`).test(n))).toBe(true);
    } finally {
      seen.stop();
    }
    expect(existsSync(dead)).toBe(false);
    expect(readdirSync(stage)).toEqual([]);
  });
});

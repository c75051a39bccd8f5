/**
 * SIGTERM and SIGINT during an S3 delivery, with the built CLI against the sandbox and a store that
 * takes a PUT and never answers it (s3rver behind the shim of test/helpers/s3-server.ts, the PUT
 * held: the connection accepted, no byte of an answer). Once the PUT has reached the store the
 * signal is sent: the process stops the upload and exits 143 (130), the run's delivery is not
 * recorded delivered (its runs stay pending in the ledger, read from the snapshot file), no manifest
 * is there, and the next sync against the working store delivers every run.
 */
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import Database from "better-sqlite3";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { startSandbox, type Sandbox } from "../../src/sandbox/index.js";
import { startCli } from "../helpers/cli-process.js";
import { runDir } from "../helpers/run-folders.js";
import { startS3Server, type S3TestServer } from "../helpers/s3-server.js";
import { ALL_CLAIMS } from "../helpers/sandbox-truth.js";
import { EVENT_DEADLINE_MS } from "../helpers/wait.js";

let sb: Sandbox;
let s3: S3TestServer;
let dir: string;
const window = ["--claims-since", ALL_CLAIMS.from, "--claims-until", ALL_CLAIMS.to];

beforeAll(async () => {
  sb = await startSandbox({ members: 40, groups: 2, seed: 51 });
  s3 = await startS3Server(["lake"]);
  dir = mkdtempSync(join(tmpdir(), "bsync-s3-stop-"));
});
afterAll(async () => {
  await sb?.close();
  await s3?.close();
  if (dir) rmSync(dir, { recursive: true, force: true });
});

/** The ledger of `output` in the snapshot at `db`: the runs it received, and its deliveries' status and error code. */
function ledger(db: string, output: string): { received: number[]; deliveries: { status: string; code: string | undefined }[] } {
  const d = new Database(db, { readonly: true });
  try {
    const received = d.prepare("SELECT run_id FROM _delivered_runs WHERE output = ? ORDER BY run_id").pluck().all(output) as number[];
    const rows = d.prepare("SELECT status, error FROM _deliveries WHERE output = ? ORDER BY delivery_id").all(output) as { status: string; error: string | null }[];
    return { received, deliveries: rows.map((r) => ({ status: r.status, code: r.error?.split(":")[0] })) };
  } finally {
    d.close();
  }
}

describe("a stop during an S3 upload that the store never answers", () => {
  for (const [signal, code] of [
    ["SIGTERM", 143],
    ["SIGINT", 130],
  ] as const) {
    it(`${signal} once the PUT has reached the store: exit ${code}, the delivery pending (no run received, no manifest); the next sync delivers both runs`, async () => {
      const cwd = mkdtempSync(join(dir, `${signal}-`));
      const db = join(cwd, "snap.db");
      const env = { BENEFITS_BASE_URL: sb.baseUrl, BENEFITS_API_KEY: sb.keys.full, BENEFITS_DB: db, BENEFITS_PII_KEY: "s3-stop-test-pii-key-0123456789", ...s3.env };
      const prefix = `stop-${signal.toLowerCase()}`;
      const url = `s3://lake/${prefix}`;
      const hold = s3.hold((q) => q.method === "PUT" && q.path.startsWith(`/lake/${prefix}/${runDir(1)}/`));
      await sb.advance();
      const child = startCli(["sync", ...window, "--out", url, "--json"], env, cwd);
      await Promise.race([hold.held, child.done.then((x) => Promise.reject(new Error(`sync exited before its first upload: ${x.stderr}`)))]);
      child.child.kill(signal);
      let timer: NodeJS.Timeout | undefined;
      const stopped = await Promise.race([
        child.done,
        new Promise<never>((_, reject) => (timer = setTimeout(() => reject(new Error(`sync still running ${EVENT_DEADLINE_MS} ms after ${signal}, its PUT unanswered`)), EVENT_DEADLINE_MS))),
      ]).finally(() => {
        clearTimeout(timer);
        if (child.child.exitCode === null) child.child.kill("SIGKILL");
      });
      hold.release();
      expect(stopped.code, stopped.stderr).toBe(code);
      expect(JSON.parse(stopped.stdout.trim().split("\n").at(-1)!).status).toBe("succeeded");
      expect(stopped.stderr).toMatch(new RegExp(`${url}.*stay pending`, "s"));
      const output = `csv:${url}`;
      expect(ledger(db, output)).toEqual({ received: [], deliveries: [{ status: "failed", code: "INTERRUPTED" }] });
      expect((await s3.keys("lake", `${prefix}/`)).filter((k) => k.endsWith("manifest.json"))).toEqual([]);
      await sb.advance();
      const next = await startCli(["sync", ...window, "--out", url, "--quiet"], env, cwd).done;
      expect(next.code, next.stderr).toBe(0);
      expect((await s3.keys("lake", `${prefix}/`)).filter((k) => k.endsWith("manifest.json"))).toEqual([`${prefix}/${runDir(1)}/manifest.json`, `${prefix}/${runDir(2)}/manifest.json`]);
      expect(ledger(db, output).received).toEqual([1, 2]);
    });
  }
});

/**
 * A snapshot on a full disk: a real small file system (tmpfs, mounted here: the tests run as root)
 * fills during the run. The CLI exits 1 and says which file, how much space is free and what to do
 * (not a bare "database or disk is full"); once space returns, the run is recorded failed (by
 * itself, or by the next run when even that write did not fit) and the next run resumes its walk.
 */
import BetterSqlite3 from "better-sqlite3";
import { execFileSync } from "node:child_process";
import { mkdirSync, mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { startCli } from "../helpers/cli-process.js";

let dir: string;
let mounted = false;

beforeAll(() => {
  dir = mkdtempSync(join(tmpdir(), "bsync-full-"));
  mkdirSync(join(dir, "disk"));
  // 6 MB holds the new snapshot (about 1 MB) but not the embedded sandbox's first walk in its WAL.
  execFileSync("mount", ["-t", "tmpfs", "-o", "size=6m", "tmpfs", join(dir, "disk")]);
  mounted = true;
});
afterAll(() => {
  if (mounted) execFileSync("umount", [join(dir, "disk")]);
  rmSync(dir, { recursive: true, force: true });
});

describe("a snapshot on a full disk", () => {
  it("fails with the file, the free space and what to do (exit 1); with space back the run is recorded failed and the next run resumes it", async () => {
    const db = join(dir, "disk", "snap.db");
    const env = { BENEFITS_DB: db, BENEFITS_PII_KEY: "disk-full-test-pii-key-0123456789" };
    const full = await startCli(["sync", "--env", "sandbox", "--quiet"], env).done;
    const said = `exit ${full.code}\n${full.stderr}\n${full.stdout}`;
    expect(full.code, said).toBe(1);
    expect(full.stderr, said).toContain(`error (DISK_FULL): disk full: the snapshot ${db} could not be written: `);
    expect(full.stderr, said).toMatch(/: \d+(\.\d+)? (bytes|KB|MB) free on the file system that holds /);
    expect(full.stderr, said).toMatch(/Free space there/);
    expect(full.stderr, said).toMatch(/run sync again: it resumes this run's walk/);
    expect(full.stderr, said).not.toMatch(/^database or disk is full/m);

    execFileSync("mount", ["-o", "remount,size=64m", join(dir, "disk")]);
    const next = await startCli(["sync", "--env", "sandbox", "--json"], env).done;
    expect(next.code, next.stderr).toBe(0);
    const resumed = JSON.parse(next.stdout.trim().split("\n").pop()!) as { runId: number; status: string; resumedFrom?: number };
    expect(resumed).toMatchObject({ runId: 2, status: "succeeded", resumedFrom: 1 });
    const snap = new BetterSqlite3(db, { readonly: true });
    const runs = snap.prepare("SELECT run_id, status, error FROM _runs ORDER BY run_id").all() as { run_id: number; status: string; error: string | null }[];
    snap.close();
    expect(runs.map((r) => [r.run_id, r.status])).toEqual([
      [1, "failed"],
      [2, "succeeded"],
    ]);
  }, 180_000);
});

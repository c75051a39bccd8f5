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
const mounted: string[] = [];

beforeAll(() => {
  dir = mkdtempSync(join(tmpdir(), "bsync-full-"));
});
afterAll(() => {
  // Lazily: a process of a failed test may still hold a file there.
  for (const m of mounted) execFileSync("umount", ["-l", m]);
  rmSync(dir, { recursive: true, force: true });
});

/** A tmpfs of `size` under the test's folder, and the CLI's first sync of a new snapshot on it. */
async function syncOnDisk(size: string): Promise<{ disk: string; db: string; env: Record<string, string>; full: Awaited<ReturnType<typeof startCli>["done"]> }> {
  const disk = join(dir, size);
  mkdirSync(disk);
  execFileSync("mount", ["-t", "tmpfs", "-o", `size=${size}`, "tmpfs", disk]);
  mounted.push(disk);
  const db = join(disk, "snap.db");
  const env = { BENEFITS_DB: db, BENEFITS_PII_KEY: "disk-full-test-pii-key-0123456789" };
  return { disk, db, env, full: await startCli(["sync", "--env", "sandbox", "--quiet"], env).done };
}

/**
 * The largest disk that still fills: the walk fits and a late write does not (the new snapshot is
 * about 1 MB and its first WAL about 3 MB, a finished one 4 to 6 MB). A fixed 6 MB, where the walk
 * itself filled the disk, stopped being a fill once the run's end empties the WAL: on 2026-12-02 a
 * first sync fitted in it in 2 runs of 5, so it is no longer one of the cases. That size depends on the sandbox's data
 * and the store's layout, so it is found (between 3 and 8 MB, to 32 KB, the largest whose sync fails),
 * not written down.
 */
const disks: [string, () => Promise<Awaited<ReturnType<typeof syncOnDisk>>>][] = [
  [
    "the largest that still fills",
    async () => {
      // Halving between a disk that fills (3 MB) and one that fits (8 MB), to 32 KB: the edge moves
      // with the store's layout and with when the WAL is checkpointed (a first sync fitted in 6 MB once and not once on 2026-12-02).
      let fails = await syncOnDisk("3072k");
      if (fails.full.code === 0) throw new Error("a first sync fitted in 3 MB: the sizes no longer bracket the snapshot");
      let [lo, hi] = [3072, 8192];
      if ((await syncOnDisk(`${hi}k`)).full.code !== 0) throw new Error("a first sync did not fit in 8 MB: the sizes no longer bracket the snapshot");
      while (hi - lo > 32) {
        const mid = Math.round((lo + hi) / 2);
        const attempt = await syncOnDisk(`${mid}k`);
        if (attempt.full.code !== 0) [lo, fails] = [mid, attempt];
        else hi = mid;
      }
      return fails;
    },
  ],
];

describe.each(disks)("a snapshot on a full disk (tmpfs of %s)", (_name, fill) => {
  it("fails with the file, the free space and what to do (exit 1); the run is recorded failed and the next run resumes it", async () => {
    const { disk, db, env, full } = await fill();
    const said = `exit ${full.code}\n${full.stderr}\n${full.stdout}`;
    expect(full.code, said).toBe(1);
    expect(full.stderr, said).toContain(`error (DISK_FULL): disk full: the snapshot ${db} could not be written: `);
    expect(full.stderr, said).toMatch(/: \d+(\.\d+)? (bytes|KB|MB) free on the file system that holds /);
    expect(full.stderr, said).toMatch(/Free space there/);
    expect(full.stderr, said).toMatch(/run sync again: it resumes this run's walk/);
    expect(full.stderr, said).not.toMatch(/^database or disk is full/m);

    // The run's last write did not fit, but SQLite gave back the space of the write it rolled
    // back: the failure itself is recorded, with what the user was told.
    const during = new BetterSqlite3(db, { readonly: true });
    try {
      expect(during.prepare("SELECT status, error FROM _runs WHERE run_id = 1").get()).toMatchObject({ status: "failed", error: expect.stringMatching(/^DISK_FULL: disk full: the snapshot /) });
    } finally {
      during.close();
    }

    execFileSync("mount", ["-o", "remount,size=64m", disk]);
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
  });
});

/**
 * Disks that fill as the first run starts: the migrated snapshot fits, and on some of them so does
 * the run's row, but not the writes after it (indexes, the SSN scrub). What the CLI says must be
 * what the run log holds: "No run started" only when there is no run row; otherwise that run N
 * was started and failed, recorded failed (or, when even that did not fit, left to the next run).
 * Which sizes land where depends on the schema, so a range is tried and one of them must leave a row.
 */
describe("a snapshot on a disk that fills as the first run starts", () => {
  it("says run N was started and is recorded failed whenever the run log has run N, never 'No run started'", async () => {
    let leftARun = 0;
    for (let kb = 2400; kb <= 5200; kb += 400) {
      const { disk, db, env, full } = await syncOnDisk(`${kb}k`);
      const said = `${kb}k: exit ${full.code}\n${full.stderr}\n${full.stdout}`;
      if (full.code === 0) continue;
      expect(full.code, said).toBe(1);
      const snap = new BetterSqlite3(db, { readonly: true, fileMustExist: true });
      let runs: { run_id: number; status: string; error: string | null }[] = [];
      try {
        const hasRuns = snap.prepare("SELECT 1 FROM sqlite_master WHERE name = '_runs'").get() !== undefined;
        if (hasRuns) runs = snap.prepare("SELECT run_id, status, error FROM _runs ORDER BY run_id").all() as typeof runs;
      } finally {
        snap.close();
      }
      if (runs.length === 0) {
        expect(full.stderr, said).not.toMatch(/^Run \d+/m);
        // Before any run, too, the disk is named full (the PII key's check, written at the first
        // start, once said only SQLite's "database or disk is full").
        expect(full.stderr, said).toMatch(/disk full: the snapshot .*\[DISK_FULL\]|error \(DISK_FULL\): disk full: the snapshot /);
        continue;
      }
      expect(runs.map((r) => r.run_id), said).toEqual([1]);
      expect(full.stderr, said).not.toContain("No run started");
      if (/^Run 1 failed in /m.test(full.stderr)) continue; // the walk began: the existing tests' case
      leftARun++;
      expect(full.stderr, said).toContain("error (DISK_FULL): disk full: the snapshot ");
      if (runs[0]!.status === "failed") {
        expect(runs[0]!.error, said).toMatch(/^DISK_FULL: disk full: the snapshot /);
        expect(full.stderr, said).toContain("Run 1 was started and failed before its walk: it is recorded as failed");
        continue;
      }
      // Even the row that says so did not fit: the CLI says the run stays `running` until the next run.
      expect(runs[0]!.status, said).toBe("running");
      expect(full.stderr, said).toContain("Run 1 was started and failed before its walk: it could not be recorded as failed, so it shows as running until the next run marks it failed");
      execFileSync("mount", ["-o", "remount,size=64m", disk]);
      const next = await startCli(["sync", "--env", "sandbox", "--json"], env).done;
      expect(next.code, next.stderr).toBe(0);
      const after = new BetterSqlite3(db, { readonly: true });
      try {
        expect(after.prepare("SELECT run_id, status FROM _runs ORDER BY run_id").all(), said).toEqual([
          { run_id: 1, status: "failed" },
          { run_id: 2, status: "succeeded" },
        ]);
      } finally {
        after.close();
      }
    }
    expect(leftARun, "no disk from 2400k to 5200k filled between the run's row and its walk: the sizes no longer bracket it").toBeGreaterThan(0);
  });
});

/**
 * `prune` on a disk that fills (a real small file system, tmpfs, mounted here: the tests run as
 * root): exit 1 and what `sync` says of a full disk (which file, the space free, what to do),
 * with what the prune had removed before it stopped; not a bare "disk I/O error". The disk is
 * filled to a few sizes of free space left, since where the prune runs out depends on the data.
 */
import BetterSqlite3 from "better-sqlite3";
import { execFileSync } from "node:child_process";
import { mkdirSync, mkdtempSync, rmSync, statfsSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { startSandbox, type Sandbox } from "../../src/sandbox/index.js";
import { startCli } from "../helpers/cli-process.js";

let sb: Sandbox;
let dir: string;
const mounted: string[] = [];

beforeAll(async () => {
  sb = await startSandbox({ members: 150, groups: 2, seed: 23 });
  dir = mkdtempSync(join(tmpdir(), "bsync-prune-full-"));
});
afterAll(async () => {
  await sb?.close();
  for (const m of mounted) execFileSync("umount", ["-l", m]);
  if (dir) rmSync(dir, { recursive: true, force: true });
});

/** Fill the file system at `disk` until `leave` bytes are free (a filler file, written till it fails). */
function fill(disk: string, leave: number): void {
  const fs = statfsSync(disk);
  const free = fs.bavail * fs.bsize;
  const chunk = Buffer.alloc(1 << 16, 1);
  const filler = join(disk, "filler");
  let left = free - leave;
  writeFileSync(filler, "");
  while (left > 0) {
    try {
      writeFileSync(filler, left >= chunk.length ? chunk : chunk.subarray(0, left), { flag: "a" });
    } catch {
      break;
    }
    left -= chunk.length;
  }
}

describe("prune on a disk that fills", () => {
  it("exits 1 saying the disk is full, the file, the space free, what was removed and what to do", async () => {
    let failed = 0;
    for (const leave of [0, 64 << 10, 256 << 10, 1 << 20]) {
      const disk = join(dir, `d${leave}`);
      mkdirSync(disk);
      execFileSync("mount", ["-t", "tmpfs", "-o", "size=48m", "tmpfs", disk]);
      mounted.push(disk);
      const env = { HOME: dir, BENEFITS_DB: join(disk, "snap.db"), BENEFITS_PII_KEY: "prune-full-pii-key-0123456789", BENEFITS_BASE_URL: sb.baseUrl, BENEFITS_API_KEY: sb.keys.full };
      for (let run = 1; run <= 3; run++) {
        if (run > 1) for (let k = 0; k < 3; k++) await sb.advance();
        const r = await startCli(["sync", "--quiet"], env, dir).done;
        expect(r.code, r.stderr).toBe(0);
      }
      fill(disk, leave);
      const r = await startCli(["prune", "--keep-runs", "1"], env, dir).done;
      const said = `${leave} bytes left: exit ${r.code}\n${r.stderr}\n${r.stdout}`;
      if (r.code === 0) continue;
      failed++;
      expect(r.code, said).toBe(1);
      expect(r.stderr, said).not.toMatch(/disk I\/O error|database or disk is full/);
      expect(r.stderr, said).toContain(`disk full: the snapshot ${env.BENEFITS_DB} could not be written: `);
      expect(r.stderr, said).toMatch(/: \d+(\.\d+)? (bytes|KB|MB) free on the file system that holds /);
      rmSync(join(disk, "filler"));
      const db = new BetterSqlite3(env.BENEFITS_DB, { readonly: true });
      const from = db.prepare("SELECT min(run_id) FROM _runs").pluck().get() as number;
      db.close();
      if (from > 1) {
        expect(r.stderr, said).toContain(`then run the prune again: it goes on from where it stopped. Before it stopped, runs 1 to ${from - 1} were removed (the history starts at run ${from}) and `);
      } else expect(r.stderr, said).toContain("then run the prune again: this one removed nothing");
    }
    expect(failed, "no prune failed on a full disk: the sizes no longer bracket it").toBeGreaterThan(0);
  });
});

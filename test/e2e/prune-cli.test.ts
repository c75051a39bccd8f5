/**
 * `benefits-sync prune` as a user runs it, against a snapshot synced from the sandbox over loopback
 * by the CLI: bad usage and a held prune change nothing (the file's bytes); a dry run says what a
 * prune would remove; a prune removes it, `runs` lists the removed runs as pruned, and `export`,
 * `reconcile` and a new output say that a run asked for was pruned; an analyst's write lock makes it
 * exit 75 having changed nothing, and a lock let go in time is waited for; the scheduler's
 * `retention` prunes after a successful job and logs it.
 */
import { createHash } from "node:crypto";
import { existsSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import BetterSqlite3 from "better-sqlite3";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { startSandbox, type Sandbox } from "../../src/sandbox/index.js";
import { startCli } from "../helpers/cli-process.js";
import { holdWriteLock } from "../helpers/lock-holder.js";
import { waitUntil } from "../helpers/wait.js";

let sb: Sandbox;
let dir: string;
let env: Record<string, string>;
const cli = (...args: string[]) => startCli(args, env, dir).done;
const bytes = (p: string) => createHash("sha256").update(readFileSync(p)).update(existsSync(`${p}-wal`) ? readFileSync(`${p}-wal`) : "").digest("hex");

beforeAll(async () => {
  sb = await startSandbox({ members: 150, groups: 2, seed: 23 });
  dir = mkdtempSync(join(tmpdir(), "bsync-prune-cli-"));
  env = { HOME: dir, BENEFITS_DB: join(dir, "snap.db"), BENEFITS_PII_KEY: "prune-cli-pii-key-0123456789", BENEFITS_BASE_URL: sb.baseUrl, BENEFITS_API_KEY: sb.keys.full };
  // Runs 1 and 2 delivered to out/, runs 3 and 4 not yet.
  for (let run = 1; run <= 4; run++) {
    if (run > 1) for (let k = 0; k < 3; k++) await sb.advance();
    const r = await cli("sync", "--quiet", ...(run <= 2 ? ["--out", "out"] : []));
    expect(r.code, r.stderr).toBe(0);
  }
}, 120_000);

afterAll(async () => {
  await sb?.close();
  if (dir) rmSync(dir, { recursive: true, force: true });
});

describe("benefits-sync prune", () => {
  it("refuses bad usage and a prune an output holds back, changing nothing; a dry run says what would go", async () => {
    const was = bytes(env.BENEFITS_DB!);
    for (const args of [[], ["--keep-runs", "1", "--before", "2026-01-01"], ["--keep-runs", "0"], ["--before", "2026-13-01"]]) {
      const r = await cli("prune", ...args);
      expect(r.code, args.join(" ")).toBe(2);
    }
    const held = await cli("prune", "--keep-runs", "1");
    expect(held.code).toBe(2);
    expect(held.stderr).toContain("would remove runs 1 to 3");
    expect(held.stderr).toContain(`csv:${join(dir, "out")} has not received run 3's changes yet`);
    expect(held.stderr).toContain("Nothing was removed");
    const dryHeld = await cli("prune", "--keep-runs", "1", "--dry-run", "--json");
    expect(dryHeld.code).toBe(2);
    expect(JSON.parse(dryHeld.stdout.trim().split("\n").pop()!)).toMatchObject({ status: "held", keepFrom: 4, holds: [{ kind: "output", needsRun: 3 }] });
    expect(bytes(env.BENEFITS_DB!)).toBe(was);

    const dry = await cli("prune", "--keep-runs", "2", "--dry-run");
    expect(dry.code, dry.stderr).toBe(0);
    expect(dry.stdout).toMatch(/^Would remove runs 1 to 2 \(2 runs\) and \d+ closed versions \(--keep-runs 2\); the history would start at run 3\./);
    expect(dry.stdout).toContain("Nothing was changed (--dry-run).");
    expect(bytes(env.BENEFITS_DB!)).toBe(was);
  });

  it("exits 75 while an analyst holds the write lock, changing nothing, and waits for a lock let go in time", async () => {
    const was = bytes(env.BENEFITS_DB!);
    // Held until the prune has given up, however long the CLI takes to start on a loaded machine
    // (let go after 14 s by the holder's own clock, a start slower than 4 s found the lock free).
    const lock = await holdWriteLock(env.BENEFITS_DB!, 110_000);
    const busy = await cli("prune", "--keep-runs", "2");
    await lock.release();
    expect(busy.code, busy.stderr).toBe(75);
    expect(busy.stderr).toMatch(/has an open write transaction.*what this prune had removed before it stays removed.*Run the prune again/s);
    expect(bytes(env.BENEFITS_DB!)).toBe(was);
    const short = await holdWriteLock(env.BENEFITS_DB!, 2_000);
    const r = await cli("prune", "--keep-runs", "2", "--json");
    await short.released;
    expect(r.code, r.stderr).toBe(0);
    const out = JSON.parse(r.stdout.trim().split("\n").pop()!);
    expect(out).toMatchObject({ status: "pruned", keepFrom: 3, runs: { count: 2, first: 1, last: 2 }, vacuumed: "incremental" });
    expect(out.bytesReclaimed).toBe(out.bytesBefore - out.bytesAfter);
  }, 60_000);

  it("after a prune: runs lists the removed runs, export, reconcile and a new output say a run asked for was pruned", async () => {
    const runs = await cli("runs", "--json");
    expect((JSON.parse(runs.stdout) as { run_id: number; status: string }[]).map((r) => [r.run_id, r.status])).toEqual([
      [4, "succeeded"],
      [3, "succeeded"],
      [2, "pruned"],
      [1, "pruned"],
    ]);
    const exp = await cli("export", "--run", "1", "--out", "again");
    expect(exp.code).toBe(2);
    expect(exp.stderr).toMatch(/run 1 \(sync, started \S+\) was pruned on \d{4}-\d{2}-\d{2}/);
    expect(exp.stderr).toContain("the snapshot's history now starts at run 3");
    const rec = await cli("reconcile", "--from", "2", "--to", "4", "--out", "rec");
    expect(rec.code).toBe(2);
    expect(rec.stderr).toContain("--from 2: run 2 (sync, started");
    const fresh = await cli("sync", "--quiet", "--out", "fresh");
    expect(fresh.code).toBe(1);
    expect(fresh.stderr).toContain("is a new output, and this snapshot's runs before run 3 were pruned");
    const started = await cli("sync", "--quiet", "--out", "fresh", "--from-run", "3");
    expect(started.code, started.stderr).toBe(0);
    expect(existsSync(join(dir, "fresh", "00000003", "manifest.json"))).toBe(true);
    // The old output goes on where it was.
    const old = await cli("sync", "--quiet", "--out", "out");
    expect(old.code, old.stderr).toBe(0);
    // Both outputs up to date but for the last run, which `out` lacks (the scheduler's sink, below).
    const both = await cli("sync", "--quiet", "--out", "fresh");
    expect(both.code, both.stderr).toBe(0);
  });

  it("the scheduler's retention prunes after a successful job, and logs it", async () => {
    const off = { enabled: false };
    writeFileSync(
      join(dir, "benefits-sync.config.json"),
      JSON.stringify({
        jobs: { "hourly-member-sync": off, "nightly-claims-export": off, "daily-groups-designs": off, "monthly-reconcile": off },
        sinks: { lake: { type: "folder", dir: "out", format: "csv" } },
        schedule: { retention: { keepRuns: 1 } },
      }),
    );
    const daemon = startCli(["schedule", "--run-missed"], env, dir);
    let out = "";
    daemon.child.stdout!.on("data", (d: Buffer) => (out += d.toString()));
    try {
      const line = await waitUntil("the retention line", () => out.split("\n").find((l) => l.includes('"event":"retention.')));
      const event = JSON.parse(line);
      expect(event).toMatchObject({ event: "retention.pruned", job: "weekly-full-walk", bound: "--keep-runs 1" });
      const db = new BetterSqlite3(env.BENEFITS_DB!, { readonly: true });
      try {
        const last = db.prepare("SELECT max(run_id) FROM _runs").pluck().get();
        expect(event.historyFromRun).toBe(last);
        expect(db.prepare("SELECT count(*) FROM runs WHERE status <> 'pruned'").pluck().get()).toBe(1);
      } finally {
        db.close();
      }
    } finally {
      daemon.child.kill("SIGTERM");
      await daemon.done;
      rmSync(join(dir, "benefits-sync.config.json"));
    }
  }, 120_000);
});

/**
 * The prune section of `npm run bench` (BENCH_ONLY=prune; BENCH_PRUNE_MEMBERS, default
 * BENCH_MEMBERS; BENCH_PRUNE_DAYS, default 4): a snapshot of a first sync and DAYS simulated days,
 * each synced, then half of its history pruned (the runs whose removal takes about half of the
 * closed versions): benefits-sync's prune against the plain way (prune-worker.ts, `plain`) on a copy
 * of the same file, each in its own process with its peak memory. Bars: the prune within 1.5 times
 * the plain way (it plans, leaves a line per run, and works in batches a kill cannot undo), and its
 * peak memory under 300 MB. BENCH_PRUNE_KEEP=DIR keeps the synced snapshot (before the prune) in DIR
 * and, when it is there already, starts from a copy of it: a million members' syncs take most of an
 * hour, the prunes a minute.
 */
import BetterSqlite3 from "better-sqlite3";
import { spawnSync } from "node:child_process";
import { copyFileSync, existsSync, rmSync } from "node:fs";
import { dirname, join } from "node:path";
import { fileURLToPath } from "node:url";
import { NodeFlags } from "../src/cli/node-flags.js";
import { StoredResources } from "../src/store/schema/resources.js";
import type { Report, Worker } from "./analyst.js";

export interface PruneBenchOptions {
  readonly members: number;
  readonly groups: number;
  readonly claimsPerMember: number;
  readonly days: number;
  readonly window: { from: string; to: string };
}

type Start = (args: string[]) => Promise<{ baseUrl: string; key: string; stop: () => Promise<void> }>;
type Advance = (baseUrl: string) => Promise<void>;

const pruneWorkerJs = join(dirname(fileURLToPath(import.meta.url)), "prune-worker.js");

function pruneWorker(args: string[], flags: readonly string[]): Record<string, number> {
  const r = spawnSync(process.execPath, [...flags, pruneWorkerJs, ...args], { encoding: "utf8", maxBuffer: 1 << 24 });
  if (r.status !== 0) throw new Error(`prune worker ${args[0]} failed: ${r.stderr}`);
  return JSON.parse(r.stdout.trim().split("\n").pop()!) as Record<string, number>;
}

/** The first run to keep so that about half of the closed versions go, and how many succeeded runs that keeps. */
function halfway(path: string): { keepFrom: number; keepRuns: number; closed: number; removable: number } {
  const db = new BetterSqlite3(path, { readonly: true });
  try {
    const byRun = new Map<number, number>();
    for (const r of StoredResources) {
      for (const row of db.prepare(`SELECT valid_to_run AS run, count(*) AS n FROM _${r}_v WHERE ended_by IS NOT NULL GROUP BY valid_to_run`).all() as { run: number; n: number }[]) {
        byRun.set(row.run, (byRun.get(row.run) ?? 0) + row.n);
      }
    }
    const closed = [...byRun.values()].reduce((a, b) => a + b, 0);
    const runs = db.prepare("SELECT run_id FROM _runs WHERE status = 'succeeded' ORDER BY run_id").pluck().all() as number[];
    let removable = 0;
    for (const run of runs) {
      if (removable >= closed / 2) return { keepFrom: run, keepRuns: runs.filter((r) => r >= run).length, closed, removable };
      removable += [...byRun].filter(([r]) => r === run).reduce((a, [, n]) => a + n, 0);
    }
    throw new Error("the history has no halfway run");
  } finally {
    db.close();
  }
}

export async function pruneSection(dir: string, o: PruneBenchOptions, startSandbox: Start, advance: Advance, worker: Worker, report: Report): Promise<void> {
  const db = join(dir, `prune-${o.members}.db`);
  const copy = join(dir, `prune-${o.members}-plain.db`);
  const kept = process.env.BENCH_PRUNE_KEEP === undefined ? undefined : join(process.env.BENCH_PRUNE_KEEP, `prune-${o.members}-${o.days}d.db`);
  try {
    if (kept !== undefined && existsSync(kept)) {
      for (const x of ["", "-wal", ".pii-key"]) if (existsSync(kept + x)) copyFileSync(kept + x, db + x);
    } else {
      const syncs: number[] = [];
      const sb = await startSandbox(["--members", String(o.members), "--groups", String(o.groups), "--claims-per-member", String(o.claimsPerMember)]);
      try {
        for (let day = 0; day <= o.days; day++) {
          if (day > 0) await advance(sb.baseUrl);
          const r = worker(["sync", sb.baseUrl, sb.key, o.window.from, o.window.to, db]);
          if (r.status !== "succeeded") throw new Error(`sync ${day} of the prune bench failed: ${r.error}`);
          syncs.push(Number(r.ms) / 1000);
        }
      } finally {
        await sb.stop();
      }
      console.log(`  prune bench: the ${syncs.length} syncs took ${syncs.map((x) => `${x.toFixed(1)} s`).join(", ")}`);
      if (kept !== undefined) for (const x of ["", "-wal", ".pii-key"]) if (existsSync(db + x)) copyFileSync(db + x, kept + x);
    }
    const half = halfway(db);
    copyFileSync(db, copy);
    const plain = pruneWorker(["plain", copy, String(half.keepFrom)], []);
    const ours = pruneWorker(["prune", db, String(half.keepRuns)], NodeFlags);
    if (ours.keepFrom !== half.keepFrom || ours.removed !== plain.removed) {
      throw new Error(`the two prunes differ: kept from ${ours.keepFrom} vs ${half.keepFrom}, removed ${ours.removed} vs ${plain.removed}`);
    }
    const ratio = ours.ms! / plain.ms!;
    console.log(
      `  prune: ${o.members} members, ${o.days} days: ${ours.removed} of ${half.closed} closed versions and ${ours.runs} runs removed (--keep-runs ${half.keepRuns}) in ` +
        `${(ours.ms! / 1000).toFixed(1)} s, ${ours.maxRssMb} MB peak; the plain way ${(plain.ms! / 1000).toFixed(1)} s, ${plain.maxRssMb} MB; ` +
        `file ${(ours.bytesBefore! / 1e6).toFixed(0)} -> ${(ours.bytesAfter! / 1e6).toFixed(0)} MB (plain: ${(plain.bytesAfter! / 1e6).toFixed(0)} MB)` +
        (ours.full ? "; rewritten whole (VACUUM): the file was written before the erasure rule" : ""),
    );
    report(`prune of half the history at ${o.members} members / the plain way`, `${ratio.toFixed(3)} (${(ours.ms! / 1000).toFixed(1)} s vs ${(plain.ms! / 1000).toFixed(1)} s)`, "<= 1.5", ratio <= 1.5);
    report(`peak memory of that prune at ${o.members} members`, `${ours.maxRssMb} MB`, "< 300 MB", ours.maxRssMb! < 300);
  } finally {
    for (const f of [db, copy]) for (const x of [f, `${f}-wal`, `${f}-shm`]) rmSync(x, { force: true });
  }
}

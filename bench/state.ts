/**
 * The state export's section of `npm run bench` (BENCH_ONLY=state): `export --state` of a first
 * sync's snapshot (Parquet) at BENCH_MEMBERS (100,000) and, with BENCH_STATE_LARGE (e.g. 1000000),
 * at that many members too. Bars: its speed against a baseline that writes the same rows from one
 * plain `SELECT * FROM <view>` per view with the same Parquet writer, measured in the same run,
 * alternating, BENCH_REPEAT times, medians (>= 0.7); its peak memory (< 300 MB: it streams, row
 * groups bound it, not the table); and, with a large size, the per-record cost at the large size
 * against the small one (<= 1.2: linear).
 */
import { rmSync } from "node:fs";
import { dirname, join } from "node:path";
import { spawnSync } from "node:child_process";
import { fileURLToPath } from "node:url";
import type { Report, Worker } from "./analyst.js";

const here = dirname(fileURLToPath(import.meta.url));
const stateJs = join(here, "state-worker.js");

export interface StateOptions {
  readonly small: number;
  readonly large: number;
  readonly groupsPer100k: number;
  readonly claimsPerMember: number;
  readonly repeat: number;
  readonly window: { from: string; to: string };
}

type Start = (args: string[]) => Promise<{ baseUrl: string; key: string; stop: () => Promise<void> }>;

function stateWorker(args: string[]): { ms: number; rows: number; maxRssMb: number } {
  const r = spawnSync(process.execPath, [stateJs, ...args], { encoding: "utf8", maxBuffer: 1 << 24 });
  if (r.status !== 0) throw new Error(`state worker ${args[0]} failed: ${r.stderr}`);
  return JSON.parse(r.stdout.trim().split("\n").pop()!) as { ms: number; rows: number; maxRssMb: number };
}

const median = (xs: number[]) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)]!;

export async function stateSection(dir: string, o: StateOptions, startSandbox: Start, worker: Worker, report: Report): Promise<void> {
  const measure = async (members: number) => {
    const groups = Math.max(1, Math.round((o.groupsPer100k * members) / 100_000));
    const sb = await startSandbox(["--members", String(members), "--groups", String(groups), "--claims-per-member", String(o.claimsPerMember)]);
    const db = join(dir, `state-${members}.db`);
    try {
      const first = worker(["sync", sb.baseUrl, sb.key, o.window.from, o.window.to, db]);
      if (first.status !== "succeeded") throw new Error(`the first sync of ${members} members failed: ${first.error}`);
    } finally {
      await sb.stop();
    }
    try {
      const ours: { ms: number; rows: number; maxRssMb: number }[] = [];
      const plain: { ms: number; rows: number; maxRssMb: number }[] = [];
      for (let i = 0; i < o.repeat; i++) {
        const out = join(dir, `state-out-${members}`);
        plain.push(stateWorker(["plain", db, out]));
        rmSync(out, { recursive: true, force: true });
        ours.push(stateWorker(["state", db, out]));
        rmSync(out, { recursive: true, force: true });
      }
      if (ours[0]!.rows !== plain[0]!.rows) throw new Error(`the export wrote ${ours[0]!.rows} rows, the baseline ${plain[0]!.rows}`);
      const ms = median(ours.map((x) => x.ms));
      const base = median(plain.map((x) => x.ms));
      const peak = Math.max(...ours.map((x) => x.maxRssMb));
      console.log(`  state: ${members} members: ${ours[0]!.rows} rows, export --state ${(ms / 1000).toFixed(1)} s (${peak} MB peak), plain SELECT ${(base / 1000).toFixed(1)} s (${Math.max(...plain.map((x) => x.maxRssMb))} MB peak)`);
      report(`export --state at ${members} members / plain SELECT with the same Parquet writer`, `${(base / ms).toFixed(3)}`, ">= 0.7", base / ms >= 0.7);
      report(`export --state peak memory at ${members} members`, `${peak} MB`, "< 300 MB", peak < 300);
      return { perRecord: ms / ours[0]!.rows };
    } finally {
      for (const f of [db, `${db}-wal`, `${db}-shm`]) rmSync(f, { force: true });
    }
  };
  const small = await measure(o.small);
  if (o.large <= 0) return;
  const large = await measure(o.large);
  const ratio = large.perRecord / small.perRecord;
  report(`export --state per-record cost at ${o.large} members / at ${o.small}`, ratio.toFixed(3), "<= 1.2", ratio <= 1.2);
}

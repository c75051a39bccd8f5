/**
 * `npm run bench`: the sync's performance as ratios against baselines measured in the same run
 * (these machines are shared and noisy; absolute seconds mean little). Each measurement runs in
 * its own process against a sandbox in another process.
 *
 * Options (environment): BENCH_MEMBERS (default 100000), BENCH_CLAIMS_PER_MEMBER (3),
 * BENCH_GROUPS (200), BENCH_SCALE (4: the data multiple of the memory-growth check; 0 skips it),
 * BENCH_REPEAT (1: how many times to repeat the main measurements, the median is reported),
 * BENCH_ANALYST_RUNS (18: runs added to the 100k snapshot before timing `changes`; 0 skips the
 * analyst section), BENCH_ONLY (`sync`: only the first sync, re-sync and memory bars; `latency`: only the member walk under latency; `sinks`: only the sinks section; `scale`: only the
 * scale section; `timing`: only the timings taken out of the tests, see timing.ts; `webhooks`: only the receiver's section, see webhooks.ts; `prune`: only the prune's, see prune.ts, BENCH_PRUNE_MEMBERS (BENCH_MEMBERS) and BENCH_PRUNE_DAYS (4); `state`: only the state export's, see state.ts, BENCH_STATE_LARGE=1000000 adds the 1M size; `s3`: only the S3 delivery's, see s3.ts, BENCH_S3_REPEAT (3), BENCH_S3_FORMATS (csv,parquet)), BENCH_SCALE_MEMBERS (0: when set, e.g. 1000000, the scale section compares the
 * first sync's records per second at BENCH_MEMBERS and at this many members, and runs a no-change
 * re-sync of the large one). The sinks section: BENCH_SINK_REPEAT (3), BENCH_SINK_CLAIMS_PER_MEMBER
 * (3), BENCH_SINK_UPDATE_SHARE (0.5: the share of the claims its second run changes), see sinks.ts.
 */
import { spawn, spawnSync } from "node:child_process";
import { mkdtempSync, readFileSync, rmSync, statSync } from "node:fs";
import { tmpdir } from "node:os";
import { dirname, join } from "node:path";
import { createInterface } from "node:readline";
import { fileURLToPath } from "node:url";
import { accumulatedChanges, advance, questionsSection } from "./analyst.js";
import { floorLine } from "./floor.js";
import { sinksSection } from "./sinks.js";
import { s3Section } from "./s3.js";
import { pruneSection } from "./prune.js";
import { scaleSection } from "./scale.js";
import { stateSection } from "./state.js";
import { timingSection } from "./timing.js";
import { webhooksSection } from "./webhooks.js";
import { NodeFlags } from "../src/cli/node-flags.js";

const here = dirname(fileURLToPath(import.meta.url));
const serveJs = join(here, "..", "src", "sandbox", "serve.js");
const workerJs = join(here, "worker.js");
const env = (k: string, d: number) => (process.env[k] !== undefined ? Number(process.env[k]) : d);
const MEMBERS = env("BENCH_MEMBERS", 100_000);
const CPM = env("BENCH_CLAIMS_PER_MEMBER", 3);
const GROUPS = env("BENCH_GROUPS", 200);
const SCALE = env("BENCH_SCALE", 4);
const REPEAT = Math.max(1, env("BENCH_REPEAT", 1));
const ONLY = process.env.BENCH_ONLY;
const ANALYST_RUNS = env("BENCH_ANALYST_RUNS", 18);
const SCALE_MEMBERS = env("BENCH_SCALE_MEMBERS", 0);
const LATENCY = 20;
// The snapshot's bytes per record after a first sync of the default data (100,000 members), with the
// layout before issue 26 (measured at commit ab3fa89: 563,920,896 bytes for 476,092 records).
const BYTES_PER_RECORD_BEFORE = 1184;
// The sandbox's claims spread over the ~180 days before its "today"; walk them all.
const FROM = "2000-01-01";
const TO = "2100-12-31";

interface Sandbox {
  baseUrl: string;
  key: string;
  peakRssMb: () => number;
  /** CPU milliseconds the sandbox process has used so far (user and system, from /proc). */
  cpuMs: () => number;
  stop: () => Promise<void>;
}

async function startSandbox(args: string[]): Promise<Sandbox> {
  // A fixed simulated today: the figures compare across runs only if the world is the same.
  const child = spawn(process.execPath, [serveJs, "--today", "2026-01-15", ...args], { stdio: ["ignore", "pipe", "inherit"] });
  const first = await new Promise<string>((resolve, reject) => {
    const rl = createInterface({ input: child.stdout });
    rl.once("line", resolve);
    child.once("exit", (code) => reject(new Error(`the sandbox exited (${code}) before listening`)));
  });
  const info = JSON.parse(first) as { baseUrl: string; keys: { full: string } };
  const proc = (file: string) => readFileSync(`/proc/${child.pid}/${file}`, "utf8");
  return {
    baseUrl: info.baseUrl,
    key: info.keys.full,
    peakRssMb: () => {
      const status = proc("status");
      const m = /VmHWM:\s+(\d+) kB/.exec(status);
      return m ? Math.round(Number(m[1]) / 1024) : NaN;
    },
    cpuMs: () => {
      const stat = proc("stat");
      // utime and stime, in clock ticks of 10 ms, are fields 14 and 15 (12 and 13 after the name).
      const f = stat.slice(stat.lastIndexOf(")") + 2).split(" ");
      return (Number(f[11]) + Number(f[12])) * 10;
    },
    stop: () =>
      new Promise((resolve) => {
        child.once("exit", () => resolve());
        child.kill("SIGTERM");
      }),
  };
}

function worker(args: string[]): Record<string, number | string> {
  // Our sync runs under the flags the `benefits-sync` command starts node with; the baselines under none.
  const flags = args[0] === "sync" ? NodeFlags : [];
  const r = spawnSync(process.execPath, [...flags, workerJs, ...args], { encoding: "utf8", maxBuffer: 1 << 24 });
  if (r.status !== 0) throw new Error(`bench worker ${args[0]} failed: ${r.stderr}`);
  return JSON.parse(r.stdout.trim().split("\n").pop()!) as Record<string, number | string>;
}

const median = (xs: number[]) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)]!;
const fmt = (ms: number) => `${(ms / 1000).toFixed(2)} s`;
const verdict = (ok: boolean) => (ok ? "PASS" : "FAIL");
const results: { name: string; ok: boolean }[] = [];
function report(name: string, value: string, bar: string, ok: boolean) {
  results.push({ name, ok });
  console.log(`${verdict(ok)}  ${name}: ${value}  (bar: ${bar})`);
}

async function main(): Promise<void> {
  const dir = mkdtempSync(join(tmpdir(), "bsync-bench-"));
  try {
    console.log(`benefits-sync bench: ${MEMBERS} members, ~${MEMBERS * CPM} claims, ${GROUPS} groups; node ${process.version}`);
    if (ONLY === undefined || ONLY === "sync") await main3(dir);
    if (ONLY === undefined || ONLY === "latency") await latency(dir);
    if (ONLY === undefined || ONLY === "timing") await timingSection();
    if (ONLY === undefined || ONLY === "sinks") {
      const sinks = { claimsPerMember: env("BENCH_SINK_CLAIMS_PER_MEMBER", 3), repeat: env("BENCH_SINK_REPEAT", 3), updateShare: env("BENCH_SINK_UPDATE_SHARE", 0.5) };
      await sinksSection(dir, { members: MEMBERS, groups: GROUPS, ...sinks, window: { from: FROM, to: TO } }, startSandbox, worker, report);
    }
    if (ONLY === undefined || ONLY === "s3") {
      const formats = (process.env.BENCH_S3_FORMATS ?? "csv,parquet").split(",");
      await s3Section(dir, { members: MEMBERS, groups: GROUPS, claimsPerMember: CPM, repeat: env("BENCH_S3_REPEAT", 3), formats, window: { from: FROM, to: TO } }, startSandbox, worker, report);
    }
    if (ONLY === "state" || process.env.BENCH_STATE_LARGE !== undefined) {
      const large = env("BENCH_STATE_LARGE", 0);
      await stateSection(dir, { small: MEMBERS, large, groupsPer100k: (GROUPS * 100_000) / MEMBERS, claimsPerMember: CPM, repeat: REPEAT, window: { from: FROM, to: TO } }, startSandbox, worker, report);
    }
    if (ONLY === undefined || ONLY === "webhooks") await webhooksSection(dir, { members: MEMBERS, groups: GROUPS }, startSandbox, worker, report);
    if (ONLY === undefined || ONLY === "prune") {
      const members = env("BENCH_PRUNE_MEMBERS", MEMBERS);
      const groups = Math.max(1, Math.round((GROUPS * members) / MEMBERS));
      await pruneSection(dir, { members, groups, claimsPerMember: CPM, days: env("BENCH_PRUNE_DAYS", 4), window: { from: FROM, to: TO } }, startSandbox, advance, worker, report);
    }
    if (SCALE_MEMBERS > 0 || ONLY === "scale") {
      const large = SCALE_MEMBERS > 0 ? SCALE_MEMBERS : MEMBERS * 10;
      await scaleSection(dir, { small: MEMBERS, large, groupsPer100k: (GROUPS * 100_000) / MEMBERS, claimsPerMember: CPM, window: { from: FROM, to: TO } }, startSandbox, worker, report);
    }
    const failed = results.filter((r) => !r.ok).length;
    console.log(`${results.length - failed} of ${results.length} bars met`);
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
}

/** The first sync, the no-change re-sync and the memory bars, on one sandbox with claims. */
async function main3(dir: string): Promise<void> {
  {
    const sb = await startSandbox(["--members", String(MEMBERS), "--groups", String(GROUPS), "--claims-per-member", String(CPM)]);
    const base = [sb.baseUrl, sb.key, FROM, TO];
    const fetches: number[] = [];
    const inserts: number[] = [];
    const naives: number[] = [];
    const firsts: Record<string, number | string>[] = [];
    const resyncs: Record<string, number | string>[] = [];
    // What the floor of a first sync is made of, from the first round (see floor.ts).
    let floor: { fetchCpuMs: number; fetchSandboxCpuMs: number; encodeCpuMs: number; sync: { ms: number; cpuMs: number; sandboxCpuMs: number } } | undefined;
    for (let i = 0; i < REPEAT; i++) {
      const sandboxBefore = sb.cpuMs();
      const fetch = worker(["fetch", ...base]);
      const fetchSandboxCpuMs = sb.cpuMs() - sandboxBefore;
      fetches.push(Number(fetch.ms));
      const dump = join(dir, "pages.jsonl");
      worker(["dump", ...base, dump]);
      const ins = worker(["insert", dump, join(dir, `bare-${i}.db`)]);
      inserts.push(Number(ins.ms));
      const encodeCpuMs = i === 0 ? Number(worker(["encode-floor", dump]).encodeCpuMs) : 0;
      naives.push(Number(worker(["naive", ...base, join(dir, `naive-${i}.db`)]).ms));
      for (const f of [`naive-${i}.db`, `naive-${i}.db-wal`, `naive-${i}.db-shm`]) rmSync(join(dir, f), { force: true });
      rmSync(dump);
      const db = join(dir, `sync-${i}.db`);
      const syncSandboxBefore = sb.cpuMs();
      const first = worker(["sync", ...base, db]);
      const sync = { ms: Number(first.ms), cpuMs: Number(first.cpuMs), sandboxCpuMs: sb.cpuMs() - syncSandboxBefore };
      if (i === 0) floor = { fetchCpuMs: Number(fetch.cpuMs), fetchSandboxCpuMs, encodeCpuMs, sync };
      if (first.status !== "succeeded") throw new Error(`first sync failed: ${first.error}`);
      firsts.push(first);
      const sizeBefore = statSync(db).size;
      const again = worker(["sync", ...base, db]);
      if (again.status !== "succeeded") throw new Error(`re-sync failed: ${again.error}`);
      resyncs.push({ ...again, growth: (Number(again.dbBytes) - sizeBefore) / sizeBefore });
      console.log(
        `  round ${i + 1}: fetch-only ${fmt(Number(fetch.ms))} (${fetch.records} records, ${fetch.requests} requests), ` +
          `bare insert ${fmt(Number(ins.ms))}, naive sync ${fmt(naives[i]!)}, first sync ${fmt(Number(first.ms))} (${first.inserted} inserted, ${first.maxRssMb} MB peak), ` +
          `re-sync ${fmt(Number(again.ms))} (${again.unchanged} unchanged, ${again.inserted} inserted, ${again.updated} updated)`,
      );
    }
    const fetchMs = median(fetches);
    const insertMs = median(inserts);
    const firstMs = median(firsts.map((f) => Number(f.ms)));
    const resyncMs = median(resyncs.map((f) => Number(f.ms)));
    const baseline = Math.max(fetchMs, insertMs);
    report(
      "first full sync / max(fetch-only walk, plain insert in one transaction)",
      `${(firstMs / baseline).toFixed(3)} (${fmt(firstMs)} vs fetch-only ${fmt(fetchMs)}, plain insert ${fmt(insertMs)})`,
      "<= 2.0",
      firstMs / baseline <= 2.0,
    );
    const naiveMs = median(naives);
    report("first full sync / naive sync (the same walk, each item's JSON under a primary key, one transaction)", `${(firstMs / naiveMs).toFixed(3)} (${fmt(firstMs)} vs ${fmt(naiveMs)})`, "<= 2.0", firstMs / naiveMs <= 2.0);
    const perRecord = Number(firsts[0]!.dbBytes) / Number(firsts[0]!.inserted);
    report(
      "snapshot bytes per record after the first sync / before issue 26",
      `${(perRecord / BYTES_PER_RECORD_BEFORE).toFixed(3)} (${Math.round(perRecord)} vs ${BYTES_PER_RECORD_BEFORE} bytes)`,
      "<= 1.10",
      perRecord / BYTES_PER_RECORD_BEFORE <= 1.1,
    );
    const store = worker(["store-floor", join(dir, "sync-0.db"), join(dir, "floor.db")]) as unknown as { insertCpuMs: number; indexCpuMs: number; indexMs: number };
    for (const f of ["floor.db", "floor.db-wal", "floor.db-shm"]) rmSync(join(dir, f), { force: true });
    console.log(floorLine({ ...floor!, store, baselineMs: baseline }));
    report("re-sync with no changes / fetch-only walk", `${(resyncMs / fetchMs).toFixed(3)} (${fmt(resyncMs)} vs ${fmt(fetchMs)})`, "<= 1.15", resyncMs / fetchMs <= 1.15);
    const growth = median(resyncs.map((r) => Number(r.growth)));
    report("database growth on a no-change re-sync", `${(growth * 100).toFixed(3)}% (${firsts[0]!.dbBytes} bytes before)`, "< 1%", growth < 0.01);
    const peak = Math.max(...firsts.map((f) => Number(f.maxRssMb)));
    report("peak memory of the first sync", `${peak} MB`, "< 300 MB", peak < 300);
    console.log(`  (the sandbox process peaked at ${sb.peakRssMb()} MB)`);
    if (ANALYST_RUNS > 0) {
      questionsSection(join(dir, "sync-0.db"), report);
      try {
        await accumulatedChanges({ baseUrl: sb.baseUrl, key: sb.key }, join(dir, "sync-0.db"), ANALYST_RUNS, worker, { from: FROM, to: TO }, report);
      } catch (e) {
        report("analyst: changes WHERE run_id = ? as runs accumulate", `not measured: ${e instanceof Error ? e.message : String(e)}`, "< 50 ms", false);
      }
    }
    await sb.stop();

    if (SCALE > 0) {
      const big = await startSandbox(["--members", String(MEMBERS * SCALE), "--groups", String(GROUPS * SCALE), "--claims-per-member", String(CPM)]);
      const bigFirst = worker(["sync", big.baseUrl, big.key, FROM, TO, join(dir, "big.db")]);
      await big.stop();
      const growthMem = Number(bigFirst.maxRssMb) / peak - 1;
      report(
        `peak memory at ${SCALE}x the data`,
        `${bigFirst.maxRssMb} MB vs ${peak} MB: ${growthMem >= 0 ? "+" : ""}${(growthMem * 100).toFixed(1)}% (${bigFirst.inserted} records inserted)`,
        "< +20%",
        growthMem < 0.2,
      );
    }

  }
}

/**
 * The member walk with LATENCY ms per request and GROUPS groups, against the lower bound for the
 * configured concurrency: requests x latency / concurrency, or the longest group's chain, plus the
 * group list that comes first. The bar is held by the walk of an unchanged snapshot (the nightly
 * incremental case), where the store's work is small and latency is what there is to hide. A first
 * walk is also measured and shown against max(bound, bare insert of the same pages): it stores
 * 200,000 records (members, and their coverages as their own resource), and on this machine a bare
 * insert of the same pages as 100,000 rows already takes about as long as the bound.
 */
async function latency(dir: string): Promise<void> {
  const slow = await startSandbox(["--members", String(MEMBERS), "--groups", String(GROUPS), "--claims-per-member", "0", "--latency-ms", String(LATENCY)]);
  const f = worker(["fetch", slow.baseUrl, slow.key, FROM, TO, "members"]);
  const fr = worker(["fetch-raw", slow.baseUrl, slow.key, FROM, TO, "members"]);
  const dump = join(dir, "slow-pages.jsonl");
  worker(["dump", slow.baseUrl, slow.key, FROM, TO, dump, "members"]);
  const ins = worker(["insert", dump, join(dir, "slow-bare.db")]);
  rmSync(dump);
  const db = join(dir, "slow.db");
  const first = worker(["sync", slow.baseUrl, slow.key, FROM, TO, db, "members"]);
  // Three walks of the unchanged snapshot, the median held to the bar (each takes seconds; the machine is noisy).
  const agains = [0, 1, 2].map(() => worker(["sync", slow.baseUrl, slow.key, FROM, TO, db, "members"]));
  await slow.stop();
  for (const r of [first, ...agains]) if (r.status !== "succeeded") throw new Error(`member sync under latency failed: ${r.error}`);
  const again = [...agains].sort((a, b) => Number(a.ms) - Number(b.ms))[1]!;
  const concurrency = 4;
  const groupsMs = Number(f.groupsRequests) * LATENCY;
  const bound = groupsMs + Math.max((Number(f.memberRequests) * LATENCY) / concurrency, Number(f.longestMemberChain) * LATENCY);
  const requests = `${f.groupsRequests} group-list + ${f.memberRequests} member requests at concurrency ${concurrency}, longest chain ${f.longestMemberChain}`;
  console.log(`  with ${LATENCY} ms latency: lower bound ${fmt(bound)} (${requests})`);
  console.log(`  fetch-only member walk (pages parsed, nothing stored): ${fmt(Number(f.ms))}, ${(Number(f.ms) / bound).toFixed(3)} x the bound`);
  console.log(`  fetch-only member walk, items split but not parsed: ${fmt(Number(fr.ms))}, ${(Number(fr.ms) / bound).toFixed(3)} x the bound (what this sandbox allows a client that does almost nothing)`);
  const firstBase = Math.max(bound, Number(ins.ms));
  console.log(
    `  first member sync (${first.inserted} records inserted): ${fmt(Number(first.ms))}, ${(Number(first.ms) / bound).toFixed(3)} x the bound; ` +
      `${(Number(first.ms) / firstBase).toFixed(3)} x max(bound, bare insert of the same pages ${fmt(Number(ins.ms))})`,
  );
  report(
    `member walk of an unchanged snapshot with ${LATENCY} ms latency, ${GROUPS} groups / lower bound`,
    `${(Number(again.ms) / bound).toFixed(3)} (median of ${agains.map((r) => fmt(Number(r.ms))).join(", ")} vs ${fmt(bound)}; ${again.unchanged} records unchanged)`,
    "<= 1.25",
    Number(again.ms) / bound <= 1.25,
  );
}

main().catch((e) => {
  console.error(e instanceof Error ? e.message : e);
  process.exitCode = 1;
});

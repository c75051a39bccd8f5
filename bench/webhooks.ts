/**
 * The receiver's section (BENCH_ONLY=webhooks): accepted events per second over loopback from a
 * load generator at 64 concurrent connections, each durable before its 2xx, with the 50th and 99th
 * percentile of the time to a 2xx, while a no-change sync of the bench's members runs beside it in
 * another process (restarted whenever it ends, so it covers the whole load). Baseline in the same
 * run, under the same sync: the same server answering 2xx without the inbox (the cost of
 * durability, as a ratio). Every process is its own: receiver, load generator, sync, sandbox.
 *
 * The load comes from `wrk` when it is installed (see wrk.ts for why), else from webhook-load.ts.
 *
 * Options (environment): BENCH_WEBHOOK_SECONDS (10 per measurement, with wrk), BENCH_WEBHOOK_EVENTS
 * (20000 per measurement, without it), BENCH_WEBHOOK_REPEAT (3).
 */
import { spawn, type ChildProcess } from "node:child_process";
import { loadavg } from "node:os";
import { dirname, join } from "node:path";
import { createInterface } from "node:readline";
import { fileURLToPath } from "node:url";
import BetterSqlite3 from "better-sqlite3";
import { haveWrk, prepareWrk, runWrk, type WrkResult } from "./wrk.js";

const here = dirname(fileURLToPath(import.meta.url));
const SECRET = "whsec-bench-0123456789abcdef";
const CONCURRENCY = 64;

interface SandboxLike {
  baseUrl: string;
  key: string;
  stop: () => Promise<void>;
}
type Report = (name: string, value: string, bar: string, ok: boolean) => void;
type Worker = (args: string[]) => Record<string, number | string>;
/** What one load reports (the Node generator prints the same fields). */
type Load = WrkResult;

const lastLine = (child: ChildProcess) =>
  new Promise<string>((resolve, reject) => {
    let last = "";
    createInterface({ input: child.stdout! }).on("line", (l) => {
      if (!l.startsWith("ok ")) last = l;
    });
    child.once("close", (code) => (code === 0 ? resolve(last) : reject(new Error(`exited ${code}`))));
  });

const load1 = () => loadavg()[0]!.toFixed(1);

/** One measurement: a receiver (with or without the inbox), the load, and syncs running beside it. */
async function measure(mode: "inbox" | "none", inboxPath: string, events: number, sync: (() => ChildProcess) | undefined, wrk: { seconds: number } | undefined): Promise<Load & { syncs: number; load: string; cpuUsPerEvent: number; perCommit: number }> {
  const server = spawn(process.execPath, [join(here, "webhook-server.js"), mode, inboxPath, SECRET], { stdio: ["ignore", "pipe", "inherit"] });
  const lines = createInterface({ input: server.stdout });
  const serverLines: string[] = [];
  const listening = new Promise<string>((resolve, reject) => {
    lines.on("line", (l) => (serverLines.push(l), serverLines.length === 1 && resolve(l)));
    server.once("exit", (code) => reject(new Error(`the receiver exited (${code}) before listening`)));
  });
  const { url } = JSON.parse(await listening) as { url: string };
  let loading = true;
  let syncs = 0;
  let current: ChildProcess | undefined;
  const nextSync = () => {
    if (!loading || !sync) return;
    syncs++;
    current = sync();
    current.once("exit", nextSync);
  };
  nextSync();
  const before = load1();
  const prefix = `${mode}-${Date.now()}`;
  let result: Load;
  try {
    result = wrk
      ? await runWrk(url, prepareWrk(dirname(inboxPath), SECRET, wrk.seconds * 20_000, prefix), wrk.seconds, CONCURRENCY)
      : (JSON.parse(await lastLine(spawn(process.execPath, [join(here, "webhook-load.js"), url, SECRET, String(events), String(CONCURRENCY), prefix], { stdio: ["ignore", "pipe", "inherit"] }))) as Load);
  } finally {
    // Also when the load failed: nothing of this measurement may outlive it.
    loading = false;
    // The sync running when the load ended is stopped: it was there only to compete.
    current?.kill("SIGTERM");
    server.kill("SIGTERM");
  }
  const after = load1();
  await new Promise((r) => server.once("close", r));
  const end = JSON.parse(serverLines.at(-1)!) as { commits: number; cpuMs: number };
  // Every 2xx a promise kept: the inbox holds at least as many events as got their 2xx.
  const stored = mode === "inbox" ? (new BetterSqlite3(inboxPath, { readonly: true }).prepare("SELECT count(*) AS n FROM inbox_events").get() as { n: number }).n : result.ok;
  if (stored < result.ok) throw new Error(`${result.ok} events got a 2xx but the inbox holds ${stored}`);
  return { ...result, syncs, load: `${before} -> ${after}`, cpuUsPerEvent: Math.round((end.cpuMs * 1000) / result.ok), perCommit: end.commits ? Math.round(result.ok / end.commits) : 0 };
}

const median = (xs: number[]) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)]!;

export async function webhooksSection(
  dir: string,
  opts: { members: number; groups: number },
  startSandbox: (args: string[]) => Promise<SandboxLike>,
  worker: Worker,
  report: Report,
): Promise<void> {
  const events = Number(process.env.BENCH_WEBHOOK_EVENTS ?? 20_000);
  const repeat = Math.max(1, Number(process.env.BENCH_WEBHOOK_REPEAT ?? 3));
  const wrk = haveWrk() ? { seconds: Number(process.env.BENCH_WEBHOOK_SECONDS ?? 10) } : undefined;
  console.log(
    wrk
      ? `  webhooks: load from wrk, ${wrk.seconds} s per measurement`
      : `  webhooks: wrk is not installed (apt-get install wrk); the load comes from the Node generator, ${events} events per measurement, itself a bottleneck on 2 cores (see bench/wrk.ts)`,
  );
  const sb = await startSandbox(["--members", String(opts.members), "--groups", String(opts.groups), "--claims-per-member", "0"]);
  try {
    const db = join(dir, "webhooks-sync.db");
    const window = ["2000-01-01", "2100-12-31"];
    const first = worker(["sync", sb.baseUrl, sb.key, ...window, db, "designs,groups,members"]);
    if (first.status !== "succeeded") throw new Error(`the first sync failed: ${first.error}`);
    console.log(`  webhooks: snapshot of ${first.inserted} records for the sync beside the load (first sync ${(Number(first.ms) / 1000).toFixed(1)} s)`);
    const sync = () => spawn(process.execPath, [join(here, "worker.js"), "sync", sb.baseUrl, sb.key, ...window, db, "designs,groups,members"], { stdio: "ignore" });
    const durable: Awaited<ReturnType<typeof measure>>[] = [];
    const bare: Awaited<ReturnType<typeof measure>>[] = [];
    for (let i = 0; i < repeat; i++) {
      const b = await measure("none", join(dir, `none-${i}.inbox.db`), events, sync, wrk);
      const d = await measure("inbox", join(dir, `wh-${i}.inbox.db`), events, sync, wrk);
      bare.push(b);
      durable.push(d);
      for (const [name, m] of [["no inbox", b], ["durable", d]] as const) {
        console.log(
          `  round ${i + 1}, ${name}: ${m.perSecond}/s, p50 ${m.p50Ms} ms, p99 ${m.p99Ms} ms (${m.ok} ok, ${m.failed} failed; receiver CPU ${m.cpuUsPerEvent} µs/event` +
            `${name === "durable" ? `, ${m.perCommit} events/commit` : ""}; ${m.syncs} no-change sync(s) beside; load average ${m.load})`,
        );
      }
    }
    const rate = median(durable.map((d) => d.perSecond));
    const p99 = median(durable.map((d) => d.p99Ms));
    const p50 = median(durable.map((d) => d.p50Ms));
    const baseRate = median(bare.map((b) => b.perSecond));
    const failed = durable.reduce((n, d) => n + d.failed, 0);
    report(
      `webhooks: durable events per second at ${CONCURRENCY} connections, a no-change sync of ${opts.members} members beside`,
      `${rate}/s, p50 ${p50} ms, p99 ${p99} ms (median of ${repeat}; ${failed} not 2xx)`,
      ">= 2000/s and p99 < 50 ms",
      rate >= 2000 && p99 < 50 && failed === 0,
    );
    console.log(`  webhooks: durable / no inbox = ${(rate / baseRate).toFixed(3)} (${rate}/s vs ${baseRate}/s; p99 ${p99} ms vs ${median(bare.map((b) => b.p99Ms))} ms)`);
    const cpu = median(durable.map((d) => d.cpuUsPerEvent));
    console.log(`  webhooks: the receiver's own CPU per durable event ${cpu} µs (${median(bare.map((b) => b.cpuUsPerEvent))} µs without the inbox): about ${Math.round(1e6 / cpu)}/s per free core`);
  } finally {
    await sb.stop();
  }
}

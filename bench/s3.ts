/**
 * The S3 section of `npm run bench` (BENCH_ONLY=s3 runs it alone): delivering a run to an S3
 * server, against the SDK's plain PutObject of the same bytes (issue 39's bar: >= 0.7). The run is
 * a first sync of BENCH_MEMBERS members with claims (every record an insert: the largest run a
 * delivery meets); the server is s3rver on loopback in its own process (objects on the local disk).
 * Each round, in this order, each in its own process:
 *
 * - stage: the run written to a local folder by the format's writers (exportFolder), timed;
 * - put: those files read and sent by one plain PutObject each, all at once, timed;
 * - publish: our upload alone of the same folder (publishFolder: four at once, multipart above
 *   5 MB, the manifest last), timed;
 * - deliver: our whole delivery, as `sync --out s3://…` makes it after a run: `deliverToSink` with
 *   the S3 sink (the ledger claimed and settled, the bucket checked, the run staged by the same
 *   writers, uploaded, the manifest last), timed.
 *
 * Two bars, medians of BENCH_S3_REPEAT rounds (3) per format (BENCH_S3_FORMATS: csv,parquet):
 * the upload (publish / put: the same bytes, the plain way), and the whole delivery against the
 * fastest plain way to get the run there (deliver / (stage + put): the same writers, then plain
 * PutObject). Also printed, not a bar: deliver / put, the encoding on one side only (on loopback the
 * writers' CPU dwarfs the transfer; see docs/benchmarks.md). Every upload lands the same objects (count,
 * and bytes within 1%: the manifest's times).
 */
import { spawn, spawnSync } from "node:child_process";
import { mkdirSync, rmSync } from "node:fs";
import { dirname, join } from "node:path";
import { createInterface } from "node:readline";
import { fileURLToPath } from "node:url";
import type { Report, Worker } from "./analyst.js";

const here = dirname(fileURLToPath(import.meta.url));
type Start = (args: string[]) => Promise<{ baseUrl: string; key: string; stop: () => Promise<void> }>;

export interface S3BenchOptions {
  readonly members: number;
  readonly groups: number;
  readonly claimsPerMember: number;
  readonly repeat: number;
  readonly formats: readonly string[];
  readonly window: { from: string; to: string };
}

interface Landed {
  ms: number;
  objects: number;
  bytes: number;
}

function s3Worker(args: string[]): Landed {
  const r = spawnSync(process.execPath, [join(here, "s3-worker.js"), ...args], { encoding: "utf8", maxBuffer: 1 << 24 });
  if (r.status !== 0) throw new Error(`s3 worker ${args[0]} failed: ${r.stderr}`);
  return JSON.parse(r.stdout.trim().split("\n").pop()!) as Landed;
}

async function startS3(dir: string): Promise<{ endpoint: string; stop: () => Promise<void> }> {
  const child = spawn(process.execPath, [join(here, "s3-server.js"), dir], { stdio: ["ignore", "pipe", "inherit"] });
  const line = await new Promise<string>((resolve, reject) => {
    createInterface({ input: child.stdout }).once("line", resolve);
    child.once("exit", (code) => reject(new Error(`the S3 server exited (${code}) before listening`)));
  });
  return {
    endpoint: (JSON.parse(line) as { endpoint: string }).endpoint,
    stop: () => new Promise<void>((resolve) => (child.exitCode !== null ? resolve() : (child.once("exit", () => resolve()), child.kill("SIGTERM")))),
  };
}

const median = (xs: number[]) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)]!;
const secs = (ms: number) => `${(ms / 1000).toFixed(2)} s`;

export async function s3Section(dir: string, o: S3BenchOptions, startSandbox: Start, worker: Worker, report: Report): Promise<void> {
  const db = join(dir, "s3.db");
  const sb = await startSandbox(["--members", String(o.members), "--groups", String(o.groups), "--claims-per-member", String(o.claimsPerMember)]);
  try {
    const first = worker(["sync", sb.baseUrl, sb.key, o.window.from, o.window.to, db]);
    if (first.status !== "succeeded") throw new Error(`the first sync failed: ${first.error}`);
  } finally {
    await sb.stop();
  }
  const store = join(dir, "s3-store");
  mkdirSync(store, { recursive: true });
  const s3 = await startS3(store);
  try {
    for (const format of o.formats) {
      const t = { stage: [] as number[], put: [] as number[], publish: [] as number[], deliver: [] as number[] };
      const landed: Landed[] = [];
      for (let r = 0; r < o.repeat; r++) {
        const staged = join(dir, `s3-staged-${format}`);
        t.stage.push(s3Worker(["stage", db, format, staged]).ms);
        const put = s3Worker(["put", s3.endpoint, `plain-${format}-${r}`, staged]);
        const publish = s3Worker(["publish", s3.endpoint, `publish-${format}-${r}`, staged]);
        rmSync(staged, { recursive: true, force: true });
        const deliver = s3Worker(["deliver", db, s3.endpoint, `ours-${format}-${r}`, format]);
        t.put.push(put.ms);
        t.publish.push(publish.ms);
        t.deliver.push(deliver.ms);
        landed.push(put, publish, deliver);
      }
      const b = landed[0]!;
      for (const a of landed) {
        if (a.objects !== b.objects || Math.abs(a.bytes - b.bytes) > b.bytes * 0.01) throw new Error(`${format}: uploads landed ${a.objects} objects of ${a.bytes} bytes and ${b.objects} of ${b.bytes}`);
      }
      const m = { stage: median(t.stage), put: median(t.put), publish: median(t.publish), deliver: median(t.deliver) };
      const all = (xs: number[]) => xs.map(secs).join(", ");
      console.log(`  s3: ${format}: a run of ${o.members} members, ${b.objects} objects, ${(b.bytes / 1024 / 1024).toFixed(0)} MB; medians of ${o.repeat}: stage ${secs(m.stage)} (${all(t.stage)}), plain PutObject ${secs(m.put)} (${all(t.put)}), our upload ${secs(m.publish)} (${all(t.publish)}), our delivery ${secs(m.deliver)} (${all(t.deliver)})`);
      console.log(`  s3: ${format}: our whole delivery / plain PutObject alone (the writers' work on one side only): ${(m.put / m.deliver).toFixed(3)}`);
      report(`S3 upload of a run folder (${format}) / plain PutObject of the same bytes`, (m.put / m.publish).toFixed(3), ">= 0.7", m.put / m.publish >= 0.7);
      const plainWay = m.stage + m.put;
      report(`S3 delivery of a run (${format}) / its local folder then plain PutObject`, (plainWay / m.deliver).toFixed(3), ">= 0.7", plainWay / m.deliver >= 0.7);
    }
  } finally {
    await s3.stop();
    rmSync(store, { recursive: true, force: true });
    for (const f of [db, `${db}-wal`, `${db}-shm`]) rmSync(f, { force: true });
  }
}

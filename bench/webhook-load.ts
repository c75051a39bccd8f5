/**
 * A load generator for the webhook receiver, in its own process so its CPU is not the receiver's:
 *   node dist/bench/webhook-load.js URL SECRET COUNT CONCURRENCY PREFIX [MEMBERS_FILE]
 * Sends COUNT signed `member_update` events (ids PREFIX-0 ... PREFIX-<COUNT-1>) over CONCURRENCY
 * keep-alive connections, each as the service would (JSON body, X-Service-Signature, lowercase hex).
 * The events name the member ids of MEMBERS_FILE (one a line) in turn, so a receiver whose worker
 * refetches them finds real members (the crash test's sandbox); without it, made-up ids.
 * Prints `ok ID` the moment an event gets its 2xx (so a test that kills the receiver knows every
 * event that was promised), then one JSON line: {ok, failed, statuses, ms, perSecond, p50Ms, p99Ms}.
 */
import { createHmac } from "node:crypto";
import { readFileSync } from "node:fs";
import { Agent, request } from "undici";

const [url, secret, countArg, concurrencyArg, prefix, membersFile] = process.argv.slice(2) as (string | undefined)[];
if (!url || secret === undefined || !countArg || !concurrencyArg || !prefix) {
  process.stderr.write("usage: webhook-load URL SECRET COUNT CONCURRENCY PREFIX [MEMBERS_FILE]\n");
  process.exit(2);
}
const members = membersFile === undefined ? undefined : readFileSync(membersFile, "utf8").split("\n").filter((l) => l !== "");
if (members?.length === 0) {
  process.stderr.write(`webhook-load: no member id in ${membersFile}\n`);
  process.exit(2);
}
const memberOf = (i: number): string => (members ? members[i % members.length]! : `mem_${prefix}_${i % 997}`);
const key: string = secret;
const target: string = url;
const count = Number(countArg);
const concurrency = Number(concurrencyArg);
const agent = new Agent({ connections: concurrency, pipelining: 1, keepAliveTimeout: 30_000 });
const latencies: number[] = [];
const statuses: Record<string, number> = {};
let failed = 0;
let next = 0;

async function one(i: number): Promise<void> {
  const body = JSON.stringify({ id: `${prefix}-${i}`, type: "member_update", payload: { id: memberOf(i) } });
  const headers: Record<string, string> = { "content-type": "application/json" };
  if (key !== "") headers["x-service-signature"] = createHmac("sha256", key).update(body).digest("hex");
  const t0 = performance.now();
  try {
    const res = await request(target, { method: "POST", body, headers, dispatcher: agent, headersTimeout: 30_000, bodyTimeout: 30_000 });
    await res.body.dump();
    statuses[res.statusCode] = (statuses[res.statusCode] ?? 0) + 1;
    if (res.statusCode >= 200 && res.statusCode < 300) {
      latencies.push(performance.now() - t0);
      process.stdout.write(`ok ${prefix}-${i}\n`);
    } else failed++;
  } catch (e) {
    const code = (e as { code?: string }).code ?? "error";
    statuses[code] = (statuses[code] ?? 0) + 1;
    failed++;
  }
}

async function lane(): Promise<void> {
  while (next < count) await one(next++);
}

const started = performance.now();
await Promise.all(Array.from({ length: concurrency }, lane));
const ms = performance.now() - started;
await agent.close();
latencies.sort((a, b) => a - b);
const pct = (p: number) => (latencies.length ? Number(latencies[Math.min(latencies.length - 1, Math.floor(latencies.length * p))]!.toFixed(2)) : null);
process.stdout.write(`${JSON.stringify({ ok: latencies.length, failed, statuses, ms: Math.round(ms), perSecond: Math.round((latencies.length / ms) * 1000), p50Ms: pct(0.5), p99Ms: pct(0.99) })}\n`);

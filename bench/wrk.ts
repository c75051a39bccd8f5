/**
 * The webhook section's load generator: `wrk` (Debian package `wrk`, C, epoll), driving signed
 * `member_update` events over 64 keep-alive connections for a fixed time.
 *
 * Why not our Node generator (webhook-load.ts, kept for the crash test, which needs each 2xx's id):
 * on this 2-core machine it was the bottleneck it was meant to measure. Against the same durable
 * receiver with nothing beside it, it reached 3,571 events/s with a p99 of 101 ms, and wrk 9,275/s
 * with a p99 of 41 ms (2026-11-25): a Node client's own event loop and GC add their stalls to every
 * latency it times, and its CPU is taken from the receiver's.
 *
 * Each event has its own id and a signature computed here (HMAC-SHA256, lowercase hex, as the
 * service sends), written to a file a small Lua script loads before the clock starts.
 */
import { spawn, spawnSync } from "node:child_process";
import { createHmac } from "node:crypto";
import { writeFileSync } from "node:fs";
import { join } from "node:path";

export interface WrkResult {
  ok: number;
  failed: number;
  perSecond: number;
  p50Ms: number;
  p99Ms: number;
  ms: number;
}

/** True when `wrk` can be run. */
export function haveWrk(): boolean {
  return spawnSync("wrk", ["--version"], { stdio: "ignore" }).error === undefined;
}

const SCRIPT = `
local reqs = {}
local i = 0
init = function(args)
  for line in io.lines(args[1]) do
    local sp = string.find(line, " ", 1, true)
    reqs[#reqs + 1] = wrk.format("POST", nil, { ["Content-Type"] = "application/json", ["X-Service-Signature"] = string.sub(line, 1, sp - 1) }, string.sub(line, sp + 1))
  end
end
request = function()
  i = i + 1
  if i > #reqs then i = 1 end
  return reqs[i]
end
`;

/** Write `count` signed events (ids PREFIX-0 ...) and the script; returns the script's path and the events file. */
export function prepareWrk(dir: string, secret: string, count: number, prefix: string): { script: string; events: string } {
  const lines: string[] = [];
  for (let i = 0; i < count; i++) {
    const body = JSON.stringify({ id: `${prefix}-${i}`, type: "member_update", payload: { id: `mem_${prefix}_${i % 997}` } });
    lines.push(`${createHmac("sha256", secret).update(body).digest("hex")} ${body}`);
  }
  const events = join(dir, `${prefix}.events.txt`);
  const script = join(dir, "wrk-events.lua");
  writeFileSync(events, `${lines.join("\n")}\n`);
  writeFileSync(script, SCRIPT);
  return { script, events };
}

/** "40.63ms" → 40.63; "812.00us" → 0.812; "1.02s" → 1020. */
function toMs(v: string): number {
  const m = /^([\d.]+)(us|ms|s|m)$/.exec(v);
  if (!m) throw new Error(`wrk printed a latency this cannot read: ${v}`);
  const n = Number(m[1]);
  return m[2] === "us" ? n / 1000 : m[2] === "ms" ? n : m[2] === "s" ? n * 1000 : n * 60_000;
}

/** Run wrk for `seconds` at `connections` against `url`; every answer that is not 2xx counts as failed. */
export function runWrk(url: string, prep: { script: string; events: string }, seconds: number, connections: number): Promise<WrkResult> {
  return new Promise((resolve, reject) => {
    const child = spawn("wrk", ["-t1", `-c${connections}`, `-d${seconds}s`, "--timeout", "30s", "--latency", "-s", prep.script, url, "--", prep.events], { stdio: ["ignore", "pipe", "inherit"] });
    let out = "";
    child.stdout.on("data", (d: Buffer) => (out += d.toString()));
    child.once("error", reject);
    child.once("close", (code) => {
      if (code !== 0) return reject(new Error(`wrk exited ${code}: ${out}`));
      const total = /(\d+) requests in ([\d.]+)(ms|s|m)/.exec(out);
      const p50 = /^\s+50%\s+(\S+)\s*$/m.exec(out);
      const p99 = /^\s+99%\s+(\S+)\s*$/m.exec(out);
      if (!total || !p50 || !p99) return reject(new Error(`wrk's output was not understood: ${out}`));
      const non2xx = Number(/Non-2xx or 3xx responses: (\d+)/.exec(out)?.[1] ?? 0);
      const socket = /Socket errors: connect (\d+), read (\d+), write (\d+), timeout (\d+)/.exec(out);
      const errors = socket ? socket.slice(1).reduce((n, x) => n + Number(x), 0) : 0;
      const ms = toMs(`${total[2]}${total[3]}`);
      const ok = Number(total[1]) - non2xx;
      resolve({ ok, failed: non2xx + errors, perSecond: Math.round((ok / ms) * 1000), p50Ms: toMs(p50[1]!), p99Ms: toMs(p99[1]!), ms: Math.round(ms) });
    });
  });
}

/**
 * Timings that used to be upper bounds inside tests, where a loaded machine could fail them: they
 * are printed here as ratios (the tests keep only what load cannot break: lower bounds and which
 * deadline ended a request).
 *
 * - redact on a large text, and on one ten times larger: near-linear cost (a ratio near 10; a
 *   backtracking pattern would show as far more);
 * - a server that never answers against the headers deadline, and a body that trickles against
 *   the body deadline: how far past its deadline each request ended.
 */
import { createServer } from "node:http";
import type { AddressInfo } from "node:net";
import { createClient } from "../src/api/client.js";
import { redact } from "../src/errors.js";

const text = (n: number) => `${"abc 12345678901 ".repeat(20_000 * n)}${'"ssn":"1"'.repeat(1000 * n)}`;

function msOf(f: () => void): number {
  const t = performance.now();
  f();
  return performance.now() - t;
}

async function overrun(handler: Parameters<typeof createServer>[1], deadlines: { headersMs?: number; bodyMs?: number }, deadlineMs: number): Promise<number> {
  const server = createServer(handler);
  await new Promise<void>((r) => server.listen(0, "127.0.0.1", r));
  const c = createClient({ baseUrl: `http://127.0.0.1:${(server.address() as AddressInfo).port}`, apiKey: "bench", deadlines, retry: { maxAttempts: 1 } });
  const t = performance.now();
  await c.getJson("/v2/members").catch(() => undefined);
  const ms = performance.now() - t - deadlineMs;
  await c.close();
  server.closeAllConnections();
  await new Promise((r) => server.close(r));
  return ms;
}

/** Print the section; returns nothing to hold to a bar (these are for reading, not gating). */
export async function timingSection(): Promise<void> {
  redact(text(1)); // warm
  const one = Math.min(...[0, 1, 2].map(() => msOf(() => redact(text(1)))));
  const ten = Math.min(...[0, 1, 2].map(() => msOf(() => redact(text(10)))));
  console.log(`  redact: ${one.toFixed(1)} ms on ${text(1).length} chars, ${ten.toFixed(1)} ms on 10x: ratio ${(ten / one).toFixed(2)} (linear is 10)`);
  const headers = await overrun(() => {}, { headersMs: 1000 }, 1000);
  const body = await overrun(
    (_req, res) => {
      res.writeHead(200, { "content-type": "application/json" });
      res.write('{"data":[');
      const t = setInterval(() => res.write(" "), 100);
      res.on("close", () => clearInterval(t));
    },
    { bodyMs: 800 },
    800,
  );
  console.log(`  deadlines: a server that never answers ended ${headers.toFixed(0)} ms past the 1000 ms headers deadline; a trickling body ${body.toFixed(0)} ms past the 800 ms body deadline`);
}

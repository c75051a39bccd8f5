/**
 * The scale check, opt-in because it takes about a minute: a full walk of 1,000,000
 * generated members served by a separate sandbox process (the built `dist/src/sandbox/serve.js`),
 * whose peak resident memory is read from /proc and printed.
 *
 *   npm run build && SANDBOX_MILLION=1 npx vitest run test/integration/sandbox/million-walk.test.ts
 */
import { spawn } from "node:child_process";
import { existsSync, readFileSync } from "node:fs";
import { createInterface } from "node:readline";
import { describe, expect, it } from "vitest";
import { createClient } from "../../../src/api/index.js";

const SERVE = process.env.SANDBOX_SERVE_JS ?? "dist/src/sandbox/serve.js";
const members = Number(process.env.SANDBOX_MILLION_MEMBERS ?? 1_000_000);

describe.runIf(process.env.SANDBOX_MILLION === "1")("a 1,000,000-member walk", () => {
  it("is served completely in bounded memory", { timeout: 600_000 }, async () => {
    expect(existsSync(SERVE)).toBe(true);
    const child = spawn(process.execPath, [SERVE, "--today", "2026-01-15", "--members", String(members), "--seed", "42"], { stdio: ["ignore", "pipe", "inherit"] });
    try {
      const line = await new Promise<string>((resolve) => createInterface({ input: child.stdout }).once("line", resolve));
      const { baseUrl, keys } = JSON.parse(line) as { baseUrl: string; keys: { full: string } };
      const client = createClient({ baseUrl, apiKey: keys.full });
      const t0 = performance.now();
      let n = 0;
      let pages = 0;
      let last = "";
      let outOfOrder = 0;
      for await (const page of client.pages("members")) {
        pages++;
        for (const m of page.items as { id: string; createdAt: string }[]) {
          if (!(m.createdAt > last)) outOfOrder++;
          last = m.createdAt;
          n++;
        }
      }
      await client.close();
      const status = readFileSync(`/proc/${child.pid}/status`, "utf8");
      const peakMb = Math.round(Number(/VmHWM:\s+(\d+)/.exec(status)?.[1] ?? 0) / 1024);
      console.log(JSON.stringify({ members: n, pages, seconds: Math.round((performance.now() - t0) / 100) / 10, sandboxPeakRssMb: peakMb }));
      expect(n).toBeGreaterThan(members * 0.95);
      expect(outOfOrder).toBe(0);
      // Bounded: far below what holding every page's JSON (about 650 MB for a million members) would take.
      expect(peakMb).toBeLessThan(400);
    } finally {
      child.kill("SIGTERM");
    }
  });
});

/**
 * `benefits-sync sandbox` as a stand-in for the service, run as a user would: its own process, the
 * built CLI syncing from it with the default claims window, and `sandbox advance` making days pass.
 * Its "today" is the real date unless `--today` fixes it, so the rolling claims window and the
 * reconciliation's as-of date mean what they mean against the service.
 */
import { createServer, type Server } from "node:http";
import type { AddressInfo } from "node:net";
import { mkdtempSync, readFileSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { request } from "undici";
import { afterAll, afterEach, beforeAll, describe, expect, it } from "vitest";
import { startCli, type CliRun } from "../helpers/cli-process.js";
import { waitUntil } from "../helpers/wait.js";

let dir: string;
const running: CliRun[] = [];
beforeAll(() => {
  dir = mkdtempSync(join(tmpdir(), "bsync-standin-"));
});
afterEach(async () => {
  for (const r of running.splice(0)) {
    r.child.kill("SIGTERM");
    await r.done;
  }
});
afterAll(() => rmSync(dir, { recursive: true, force: true }));

/** The real UTC day, from the clock (not from the code under test). */
const realDay = (): string => new Date().toISOString().slice(0, 10);
const plusDays = (day: string, n: number): string => new Date(Date.parse(`${day}T00:00:00Z`) + n * 86_400_000).toISOString().slice(0, 10);

/** Start `benefits-sync sandbox ARGS` and wait for its banner; the base URL and the full key from it. */
async function startSandboxCli(args: string[]): Promise<{ url: string; key: string; banner: () => string }> {
  const run = startCli(["sandbox", ...args], {});
  running.push(run);
  let out = "";
  let exited: string | undefined;
  run.child.stdout!.on("data", (d: Buffer) => (out += d.toString()));
  void run.done.then((r) => (exited = `the sandbox exited ${r.code}: ${r.stderr}`));
  const url = await waitUntil("the sandbox's banner", () => {
    if (exited !== undefined) throw new Error(exited);
    return /listening on (http:\/\/127\.0\.0\.1:\d+)/.exec(out)?.[1];
  });
  const key = await waitUntil("the full key", () => /full key:\s+(\S+)/.exec(out)?.[1]);
  return { url, key, banner: () => out };
}

async function cli(args: string[], env: Record<string, string> = {}): Promise<{ code: number | null; stdout: string; stderr: string }> {
  return startCli(args, env, dir).done;
}

async function sandboxToday(url: string): Promise<string> {
  const res = await request(`${url}/_sandbox/info`);
  return ((await res.body.json()) as { today: string }).today;
}

describe("benefits-sync sandbox as a stand-in", () => {
  it("serves the real date by default: a first sync with the default claims window sees claims", async () => {
    const before = realDay();
    const sb = await startSandboxCli(["--members", "600", "--seed", "5"]);
    const db = join(dir, "default-window.db");
    const r = await cli(["sync", "--json", "--db", db], { BENEFITS_BASE_URL: sb.url, BENEFITS_API_KEY: sb.key });
    expect(r.code, r.stderr).toBe(0);
    const summary = JSON.parse(r.stdout) as { resources: Record<string, { seen: number }> };
    expect(summary.resources.claims?.seen).toBeGreaterThan(0);
    const days = [before, realDay()];
    expect(days).toContain(await sandboxToday(sb.url));
    expect(sb.banner()).toMatch(/today \d{4}-\d{2}-\d{2} \(the real date; --today fixes it\)/);
  });

  it("a reconciliation of two syncs a simulated day apart has no false findings", async () => {
    const sb = await startSandboxCli(["--members", "600", "--seed", "6"]);
    const env = { BENEFITS_BASE_URL: sb.url, BENEFITS_API_KEY: sb.key };
    const db = join(dir, "reconcile.db");
    expect((await cli(["sync", "--quiet", "--db", db], env)).code).toBe(0);
    const adv = await request(`${sb.url}/_sandbox/advance`, { method: "POST" });
    expect(adv.statusCode).toBe(200);
    const day = (await adv.body.json()) as { changes: { members: { deleted: string[] } } };
    expect((await cli(["sync", "--quiet", "--db", db], env)).code).toBe(0);
    const r = await cli(["reconcile", "--from", "1", "--to", "2", "--out", join(dir, "report"), "--json", "--db", db]);
    expect(r.code, r.stderr).toBe(0);
    const report = JSON.parse(r.stdout) as { findings: Record<string, number>; claims: { to: { count: number } } };
    // The one true finding a day can make: the sandbox deletes a member and keeps their claims (as a
    // service does), so those claims have no member covered in their group. Anything else is false.
    const deleted = new Set(day.changes.members.deleted);
    const [header, ...rows] = readFileSync(join(dir, "report", "findings.csv"), "utf8").trim().split(/\r?\n/);
    const cols = header!.split(",");
    const found = rows.map((line) => Object.fromEntries(line.split(",").map((v, i) => [cols[i], v])) as Record<string, string>);
    const explained = (f: Record<string, string>) => f.check === "claim_member_not_covered_in_group" && deleted.has(f.member_id ?? "");
    expect(found.filter((f) => !explained(f))).toEqual([]);
    for (const [check, count] of Object.entries(report.findings)) {
      expect(`${check}: ${count}`).toBe(`${check}: ${found.filter((f) => f.check === check).length}`);
    }
    expect(report.claims.to.count).toBeGreaterThan(0);
  });

  it("--today fixes the day; `sandbox advance --days 3 --url URL` makes three days pass and says so", async () => {
    const sb = await startSandboxCli(["--members", "300", "--seed", "7", "--today", "2026-01-15"]);
    expect(sb.banner()).toMatch(/today 2026-01-15 \(fixed by --today\)/);
    const r = await cli(["sandbox", "advance", "--days", "3", "--url", sb.url]);
    expect(r.code, r.stderr).toBe(0);
    expect(r.stdout).toMatch(/^2026-01-16: \d+ changes\n2026-01-17: \d+ changes\n2026-01-18: \d+ changes\nThe sandbox's today is now 2026-01-18\.\n$/);
    expect(await sandboxToday(sb.url)).toBe("2026-01-18");
    const one = await cli(["sandbox", "advance", "--url", sb.url]);
    expect(one.stdout).toMatch(/The sandbox's today is now 2026-01-19\./);
    expect(await sandboxToday(sb.url)).toBe(plusDays("2026-01-18", 1));
  });

  it("`sandbox advance` without --url, or with a URL that is not a sandbox, says what is wrong", async () => {
    const none = await cli(["sandbox", "advance"]);
    expect(none.code).toBe(2);
    expect(none.stderr).toMatch(/sandbox advance: --url is required: the sandbox's base URL, printed in its banner \(`benefits-sync sandbox`\)/);
    const other: Server = createServer((_req, res) => {
      res.writeHead(404, { "content-type": "application/json" });
      res.end('{"error":"not found"}');
    });
    await new Promise<void>((resolve) => other.listen(0, "127.0.0.1", resolve));
    const port = (other.address() as AddressInfo).port;
    try {
      const notSandbox = await cli(["sandbox", "advance", "--url", `http://127.0.0.1:${port}`]);
      expect(notSandbox.code).toBe(1);
      expect(notSandbox.stderr).toMatch(
        new RegExp(`POST http://127\\.0\\.0\\.1:${port}/_sandbox/advance answered 404: that URL is not a benefits-sync sandbox \\(the service itself has no simulated days\\)`),
      );
    } finally {
      await new Promise((resolve) => other.close(resolve));
    }
    const gone = await cli(["sandbox", "advance", "--url", `http://127.0.0.1:${port}`]);
    expect(gone.code).toBe(1);
    expect(gone.stderr).toMatch(new RegExp(`cannot reach the sandbox at 127\\.0\\.0\\.1:${port} \\(connection refused\\): is \`benefits-sync sandbox\` running there\\?`));
  });

  it("--help says what the sandbox is, how its today is chosen, and names the control endpoint", async () => {
    const r = await cli(["sandbox", "--help"]);
    expect(r.code).toBe(0);
    expect(r.stdout).toMatch(/a local stand-in for the service/);
    expect(r.stdout).toMatch(/--today <date>/);
    expect(r.stdout).toMatch(/POST \/_sandbox\/advance/);
    expect(r.stdout).toMatch(/benefits-sync sandbox advance/);
    const adv = await cli(["sandbox", "advance", "--help"]);
    expect(adv.stdout).toMatch(/--days <n>/);
    expect(adv.stdout).toMatch(/--url <url>/);
  });
});

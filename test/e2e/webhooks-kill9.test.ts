/**
 * Durability of the 2xx: 1,000 concurrent signed events from a load generator in another process
 * against the built CLI `webhooks serve`, the receiver killed with SIGKILL at a seeded moment (after
 * the N-th 2xx, N drawn per round, so a loaded machine changes when the kill lands but not where),
 * restarted, ten rounds. Every event id that got a 2xx is in the inbox after the restart; the whole
 * round is then sent again, as the service's retries would, and every id is in it exactly once.
 */
import BetterSqlite3 from "better-sqlite3";
import { spawn } from "node:child_process";
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { dirname, join } from "node:path";
import { createInterface } from "node:readline";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { CLI, startCli, type CliRun } from "../helpers/cli-process.js";
import { waitUntil } from "../helpers/wait.js";
import { Rng } from "../sim/rng.js";

const ROUNDS = Number(process.env.WEBHOOK_KILL9_ROUNDS ?? 10);
const EVENTS = 1000;
const SECRET = "whsec-kill9-0123456789abcdef";
const LOAD = join(dirname(CLI), "..", "..", "bench", "webhook-load.js");

let dir: string;
beforeAll(() => {
  dir = mkdtempSync(join(tmpdir(), "bs-whkill-"));
});
/** Every receiver started: one a failed round left running is stopped, not left behind. */
const started: CliRun[] = [];
afterAll(() => {
  for (const r of started) if (r.child.exitCode === null && r.child.signalCode === null) r.child.kill("SIGKILL");
  rmSync(dir, { recursive: true, force: true });
});

async function serve(): Promise<{ run: CliRun; url: string }> {
  const run = startCli(["webhooks", "serve", "--port", "0"], { BENEFITS_DB: join(dir, "snap.db"), BENEFITS_WEBHOOK_SECRET: SECRET }, dir);
  started.push(run);
  let out = "";
  run.child.stdout!.on("data", (d: Buffer) => (out += d.toString()));
  const url = await waitUntil("the listening line", () => {
    const line = out.split("\n").find((l) => l.includes('"webhooks.listening"'));
    return line ? (JSON.parse(line) as { url: string }).url : undefined;
  });
  return { run, url };
}

/** The load generator: calls `onOk` with each id the moment its 2xx arrives; resolves with its summary. */
function load(url: string, prefix: string, onOk: (id: string) => void): Promise<{ ok: number; failed: number }> {
  const child = spawn(process.execPath, [LOAD, url, SECRET, String(EVENTS), "64", prefix], { stdio: ["ignore", "pipe", "inherit"] });
  let summary: { ok: number; failed: number } | undefined;
  createInterface({ input: child.stdout }).on("line", (line) => {
    if (line.startsWith("ok ")) onOk(line.slice(3));
    else summary = JSON.parse(line) as { ok: number; failed: number };
  });
  return new Promise((resolve, reject) => child.once("close", (code) => (code === 0 && summary ? resolve(summary) : reject(new Error(`load generator exited ${code}`)))));
}

const inboxIds = () => {
  const db = new BetterSqlite3(join(dir, "snap.inbox.db"), { readonly: true });
  try {
    return db.prepare("SELECT event_id FROM inbox_events").pluck().all() as string[];
  } finally {
    db.close();
  }
};

describe("kill -9 of the receiver under 1,000 concurrent events", () => {
  it(`every event that got a 2xx is in the inbox after the restart, none twice (${ROUNDS} rounds)`, { timeout: 600_000 }, async () => {
    const rng = new Rng(20261124);
    const promised = new Set<string>();
    for (let round = 0; round < ROUNDS; round++) {
      const killAfter = rng.between(1, EVENTS - 1);
      const prefix = `r${round}`;
      const victim = await serve();
      let acks = 0;
      const sent = load(victim.url, prefix, (id) => {
        promised.add(id);
        if (++acks === killAfter) victim.run.child.kill("SIGKILL");
      });
      const summary = await sent;
      const died = await victim.run.done;
      // The kill landed mid-load: some events were refused by a dead receiver.
      expect(died.signal, `round ${round}: killed after the ${killAfter}th 2xx`).toBe("SIGKILL");
      expect(summary.ok).toBeGreaterThanOrEqual(killAfter);
      expect(summary.ok + summary.failed).toBe(EVENTS);

      // Restart: every promise kept.
      const again = await serve();
      const ids = new Set(inboxIds());
      const lost = [...promised].filter((id) => !ids.has(id));
      expect(lost, `round ${round}: events answered 2xx but not in the inbox`).toEqual([]);
      // The sender's retries: the whole round again, every event 2xx, each stored once.
      const resent = await load(again.url, prefix, () => undefined);
      expect(resent).toMatchObject({ ok: EVENTS, failed: 0 });
      again.run.child.kill("SIGTERM");
      expect((await again.run.done).code).toBe(143);
      const all = inboxIds();
      expect(all.length).toBe(new Set(all).size);
      expect(all.length).toBe((round + 1) * EVENTS);
    }
  });
});

/**
 * docs/sandbox.md's recipe "sandbox: webhooks to the receiver", each line run through `sh -c` as
 * printed, with `benefits-sync` on the PATH as an install puts it, except for its two ports: the
 * page's 4010 and 8787 are swapped for free ones (another suite, or a user's own sandbox, may hold
 * them). The stand-in's webhook sender must deliver the day's events to the receiver, and the
 * receiver must apply them.
 */
import { spawn } from "node:child_process";
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { closedPort } from "../helpers/ports.js";
import { installedEnv, runPrinted, startPrinted } from "../helpers/printed-commands.js";
import { docPage, namedBlock } from "../helpers/readme-blocks.js";
import { waitUntil } from "../helpers/wait.js";

/** Under a minute for any one event, as the house rules ask. */
const EVENT_MS = 55_000;

let dir: string;
let env: Record<string, string>;
beforeAll(() => {
  dir = mkdtempSync(join(tmpdir(), "bs-docs-sbwh-"));
  env = installedEnv(dir);
});
afterAll(() => rmSync(dir, { recursive: true, force: true }));

/**
 * Start a printed long-running line (it begins with variables, so `exec` cannot prefix it) in a
 * process group of its own, as a terminal does, and wait for `ready` in its stdout; its stop is
 * Ctrl+C's signal to that group, then waits for the exit.
 */
async function startUntil(line: string, ready: string): Promise<{ stop: () => Promise<void> }> {
  const child = spawn("sh", ["-c", line], { cwd: dir, env, stdio: ["ignore", "pipe", "pipe"], detached: true });
  let out = "";
  let err = "";
  child.stdout.on("data", (d: Buffer) => (out += d.toString()));
  child.stderr.on("data", (d: Buffer) => (err += d.toString()));
  const exited = new Promise<void>((resolve) => child.once("close", () => resolve()));
  const stop = async () => {
    if (child.exitCode === null && child.signalCode === null) process.kill(-child.pid!, "SIGINT");
    await exited;
  };
  try {
    await waitUntil(`"${ready}" from ${line}`, () => out.includes(ready) || (child.exitCode !== null ? Promise.reject(new Error(`${line} exited ${child.exitCode}: ${err}`)) : undefined), EVENT_MS);
  } catch (e) {
    await stop();
    throw e;
  }
  return { stop };
}

describe("docs/sandbox.md: webhooks to the receiver (its ports 4010 and 8787 swapped for free ones)", () => {
  it("runs as printed: the stand-in delivers the day's member_update events and the receiver applies them", { timeout: 240_000 }, async () => {
    const printed = namedBlock(docPage("sandbox.md"), "sandbox: webhooks to the receiver");
    const [sbPort, rcPort] = [await closedPort(), await closedPort()];
    const lines = printed.map((l) => l.replaceAll(":4010", `:${sbPort}`).replaceAll("--port 4010", `--port ${sbPort}`).replaceAll(":8787", `:${rcPort}`).replaceAll("--port 8787", `--port ${rcPort}`));
    expect(lines.join("\n"), "every printed port was swapped").not.toMatch(/4010|8787/);
    const [serveSandbox, sync, serveReceiver, configure, advance, status, deliveries, ...more] = lines;
    expect(more).toEqual([]);
    expect(serveSandbox).toMatch(/^benefits-sync sandbox --port \d+$/);
    expect(serveReceiver).toMatch(/ benefits-sync webhooks serve --port \d+$/);

    const sandbox = await startPrinted(serveSandbox!, dir, env);
    let receiver: { stop: () => Promise<void> } | undefined;
    try {
      // The key the page prints is the one the banner gives.
      const key = /full key:\s+(\S+)/.exec(sandbox.banner)?.[1];
      expect(printed.join("\n")).toContain(`BENEFITS_API_KEY=${key} `);

      const first = runPrinted(sync!, dir, env);
      expect(first.status, `${sync}\n${first.stderr}`).toBe(0);
      receiver = await startUntil(serveReceiver!, '"webhooks.listening"');

      const added = runPrinted(configure!, dir, env);
      expect(added.status, `${configure}\n${added.stderr}`).toBe(0);
      expect(JSON.parse(added.stdout)).toMatchObject({ id: expect.stringMatching(/^whc_/), url: `http://127.0.0.1:${rcPort}/webhooks`, maxAttempts: 3 });

      const day = runPrinted(advance!, dir, env);
      expect(day.status, `${advance}\n${day.stderr}`).toBe(0);

      // The sandbox's deliveries (the printed line, run until every one is settled), then the receiver's account.
      type Delivery = { state: string; final: boolean; attempts: { status: number | null }[] };
      const records = await waitUntil(
        "every delivery of the day's events settled",
        () => {
          const r = runPrinted(deliveries!, dir, env);
          expect(r.status, `${deliveries}\n${r.stderr}`).toBe(0);
          const data = (JSON.parse(r.stdout) as { data: Delivery[] }).data;
          return data.length > 0 && data.every((d) => d.final) ? data : undefined;
        },
        EVENT_MS,
      );
      expect(records.filter((d) => d.state !== "successful" || d.attempts.at(-1)?.status !== 200)).toEqual([]);

      const shown = await waitUntil(
        "webhooks status showing the day's events applied, none pending",
        () => {
          const r = runPrinted(status!, dir, env);
          expect(r.status, `${status}\n${r.stderr}`).toBe(0);
          const applied = Number(/^\s+applied:\s+(\d+)/m.exec(r.stdout)?.[1] ?? 0);
          return applied > 0 && /^\s+pending:\s+0\b/m.test(r.stdout) && /^\s+last applied: run \d+ at /m.test(r.stdout) ? r.stdout : undefined;
        },
        EVENT_MS,
      );
      expect(shown).toMatch(/^\s+parked:\s+none$/m);
    } finally {
      await receiver?.stop();
      await sandbox.stop();
    }
  });
});

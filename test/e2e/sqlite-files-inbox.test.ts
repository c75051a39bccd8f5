/**
 * Issue 37: the receiver opened and closed a raw descriptor of its inbox (each second, in its
 * worker), which dropped the POSIX locks of its own SQLite connections; the next outside `sqlite3`
 * to close then checkpointed and deleted the -wal and -shm under the receiver, whose later commits
 * (events answered 200) went to a deleted file. Here the built CLI `webhooks serve` takes signed
 * deliveries in batches while the `sqlite3` shell reads and writes the inbox and `webhooks status`
 * runs between batches; then kill -9, and a restart. Every event answered 2xx is in the inbox and
 * applied, no delivery got a 5xx, and the inbox passes `PRAGMA integrity_check`.
 */
import { execFile, spawn } from "node:child_process";
import { mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { dirname, join } from "node:path";
import { createInterface } from "node:readline";
import { promisify } from "node:util";
import { afterAll, beforeAll, expect, it } from "vitest";
import { startSandbox, type Sandbox } from "../../src/sandbox/index.js";
import { CLI, startCli, type CliRun } from "../helpers/cli-process.js";
import { TEST_PII_KEY } from "../helpers/temp-store.js";
import { waitUntil } from "../helpers/wait.js";
import { serveWebhooks, stopAll } from "../helpers/webhooks-serve.js";

const SECRET = "whsec-outside-0123456789abcdef";
const LOAD = join(dirname(CLI), "..", "..", "bench", "webhook-load.js");
const BATCHES = 4;
const EVENTS = 120;
const run = promisify(execFile);
/** Now, as the receiver writes times (older rows are pruned after the retention days). */
const NOW = "strftime('%Y-%m-%dT%H:%M:%fZ', 'now')";

let dir: string;
let sb: Sandbox | undefined;
let env: Record<string, string>;
const started: CliRun[] = [];
beforeAll(async () => {
  dir = mkdtempSync(join(tmpdir(), "bs-whoutside-"));
  sb = await startSandbox({ members: 60, groups: 2, seed: 3701 });
  env = { BENEFITS_BASE_URL: sb.baseUrl, BENEFITS_API_KEY: sb.keys.full, BENEFITS_DB: join(dir, "snap.db"), BENEFITS_PII_KEY: TEST_PII_KEY.toString(), BENEFITS_WEBHOOK_SECRET: SECRET };
});
afterAll(async () => {
  await stopAll(started);
  await sb?.close();
  rmSync(dir, { recursive: true, force: true });
});

const serve = () => serveWebhooks(env, dir, started, 60_000);

/** The load generator in its own process: the ids answered 2xx, and every status it got. */
function load(url: string, prefix: string, members: string, ok: Set<string>): Promise<Record<string, number>> {
  const child = spawn(process.execPath, [LOAD, url, SECRET, String(EVENTS), "16", prefix, members], { stdio: ["ignore", "pipe", "inherit"] });
  let statuses: Record<string, number> | undefined;
  createInterface({ input: child.stdout }).on("line", (line) => {
    if (line.startsWith("ok ")) ok.add(line.slice(3));
    else statuses = (JSON.parse(line) as { statuses: Record<string, number> }).statuses;
  });
  return new Promise((resolve, reject) => child.once("close", (code) => (code === 0 && statuses ? resolve(statuses) : reject(new Error(`load generator exited ${code}`)))));
}

/** The `sqlite3` shell on the inbox, waiting for locks as a careful operator's would. */
async function shell(sql: string): Promise<string> {
  const { stdout } = await run("/usr/bin/sqlite3", ["-cmd", ".timeout 20000", join(dir, "snap.inbox.db"), sql]);
  return stdout.trim();
}

it("a kill -9 after outside sqlite3 readers and writers loses no event answered 2xx", async () => {
  const first = await startCli(["sync", "--quiet"], env, dir).done;
  expect(first.code, first.stderr).toBe(0);
  const members = join(dir, "members.txt");
  writeFileSync(members, `${[...sb!.iterate("members")].map((m) => m.id).join("\n")}\n`);

  const ok = new Set<string>();
  const statuses: Record<string, number>[] = [];
  const outside: string[] = [];
  const receiver = await serve();
  for (let b = 0; b < BATCHES; b++) {
    const id = `outside-${b}`;
    const [got] = await Promise.all([
      load(receiver.url, `b${b}`, members, ok),
      shell("SELECT count(*) FROM inbox_events"),
      shell(`INSERT INTO inbox_events (event_id, type, member_id, received_at, state, done_at) VALUES ('${id}', 'ping', NULL, ${NOW}, 'ignored', ${NOW})`),
    ]);
    statuses.push(got);
    outside.push(id);
    const status = await startCli(["webhooks", "status", "--json"], env, dir).done;
    expect(status.code, status.stderr).toBe(0);
  }
  // The last batch comes after every outside client has closed: nothing reads it before the kill.
  statuses.push(await load(receiver.url, "last", members, ok));
  receiver.run.child.kill("SIGKILL");
  expect((await receiver.run.done).signal).toBe("SIGKILL");

  const fiveHundreds = statuses.flatMap((s, i) => Object.entries(s).filter(([code]) => /^5/.test(code)).map(([code, n]) => `batch ${i}: ${n} x ${code}`));
  expect(fiveHundreds, "deliveries answered 5xx").toEqual([]);
  expect(ok.size).toBe((BATCHES + 1) * EVENTS);

  const again = await serve();
  await waitUntil("the restarted receiver's worker to apply every pending event", async () => {
    if (again.run.child.exitCode !== null) throw new Error(`the restarted receiver exited ${again.run.child.exitCode}`);
    return (await shell("SELECT count(*) FROM inbox_events WHERE state = 'pending'")) === "0";
  }, 60_000);
  const rows = new Map(
    (await shell("SELECT event_id || ' ' || state FROM inbox_events"))
      .split("\n")
      .map((l) => l.split(" ") as [string, string]),
  );
  const notApplied = [...ok].filter((id) => rows.get(id) !== "applied").map((id) => `${id}: ${rows.get(id) ?? "not in the inbox"}`);
  expect(notApplied.length, `events answered 2xx but not applied: ${notApplied.slice(0, 5).join(", ")}`).toBe(0);
  expect(outside.filter((id) => rows.get(id) !== "ignored"), "rows the sqlite3 shell committed").toEqual([]);
  again.run.child.kill("SIGTERM");
  expect((await again.run.done).code).toBe(143);
  expect(await shell("PRAGMA integrity_check")).toBe("ok");
});

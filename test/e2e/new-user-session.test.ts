/**
 * A new user's first session, scripted step by step as they would type it (the README's forms):
 * `init`, the config's service URL edited by hand to the running sandbox, `config check`, a first
 * `sync`, a simulated day (`sandbox advance`), a cron-style `sync --quiet` that prints nothing, and
 * a second sync started on top of a slow one, which exits 75 at once naming the run that holds the
 * snapshot. The built CLI in a temp dir, the sandbox in its own process over loopback.
 */
import BetterSqlite3 from "better-sqlite3";
import { existsSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { request } from "undici";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { PLACEHOLDER_URL } from "../../src/cli/config-template.js";
import { startCli, type CliRun } from "../helpers/cli-process.js";
import { waitUntil } from "../helpers/wait.js";
import { runDir } from "../helpers/run-folders.js";

let dir: string;
let sandbox: CliRun;
let url: string;
let key: string;

beforeAll(async () => {
  dir = mkdtempSync(join(tmpdir(), "bsync-newuser-"));
  sandbox = startCli(["sandbox", "--members", "150", "--seed", "4"], {});
  let out = "";
  sandbox.child.stdout!.on("data", (d: Buffer) => (out += d.toString()));
  url = await waitUntil("the sandbox's banner", () => /listening on (http:\/\/127\.0\.0\.1:\d+)/.exec(out)?.[1]);
  key = await waitUntil("the full key", () => /full key:\s+(\S+)/.exec(out)?.[1]);
});
afterAll(async () => {
  sandbox?.child.kill("SIGTERM");
  await sandbox?.done;
  if (dir) rmSync(dir, { recursive: true, force: true });
});

/** The run the snapshot says is running, once it has one. */
function runningRun(db: string): number | undefined {
  if (!existsSync(db)) return undefined;
  try {
    const conn = new BetterSqlite3(db, { readonly: true, fileMustExist: true });
    try {
      return (conn.prepare("SELECT run_id FROM _runs WHERE status = 'running'").get() as { run_id: number } | undefined)?.run_id;
    } finally {
      conn.close();
    }
  } catch {
    return undefined; // not created or migrated yet
  }
}

async function setFaults(plan: object): Promise<void> {
  const res = await request(`${url}/_sandbox/faults`, { method: "POST", body: JSON.stringify(plan), headers: { "content-type": "application/json" } });
  expect(res.statusCode, await res.body.text()).toBe(200);
}

describe("a new user's first session", () => {
  it("init, edit the URL, config check, sync, advance a day, sync --quiet, then a sync on top of a slow one", async () => {
    // The key is in the user's environment, as the README says; the URL goes in the file.
    const env = { BENEFITS_API_KEY: key };
    const cli = (...args: string[]) => startCli(args, env, dir);

    const init = await cli("init").done;
    expect(init.code, init.stderr).toBe(0);
    const file = join(dir, "benefits-sync.config.json");
    const written = readFileSync(file, "utf8");
    expect(written).toContain(PLACEHOLDER_URL);
    writeFileSync(file, written.replace(PLACEHOLDER_URL, url));

    const check = await cli("config", "check").done;
    expect(check.code, check.stdout + check.stderr).toBe(0);

    const first = await cli("sync").done;
    expect(first.code, first.stderr).toBe(0);
    expect(existsSync(join(dir, "benefits-sync.db"))).toBe(true);
    expect(existsSync(join(dir, "deltas", runDir(1), "manifest.json")), "the folder sink init configured received run 1").toBe(true);

    const advance = await cli("sandbox", "advance", "--url", url, "--days", "1").done;
    expect(advance.code, advance.stderr).toBe(0);

    const quiet = await cli("sync", "--quiet").done;
    expect(quiet.code, quiet.stderr).toBe(0);
    expect(quiet.stdout).toBe("");
    expect(quiet.stderr).toBe("");
    expect(existsSync(join(dir, "deltas", runDir(2), "manifest.json"))).toBe(true);

    await setFaults({ latencyMs: 1500 });
    try {
      const slow = cli("sync");
      let slowDone = false;
      const slowResult = slow.done.then((r) => ((slowDone = true), r));
      const holder = await waitUntil("the slow sync's run", () => runningRun(join(dir, "benefits-sync.db")));
      const second = await cli("sync").done;
      expect(slowDone, "the second sync returned only after the slow one had finished").toBe(false);
      expect(second.code, second.stderr).toBe(75);
      expect(second.stderr).toContain(`run ${holder} `);
      expect(second.stdout).toBe("");
      expect((await slowResult).code).toBe(0);
    } finally {
      await setFaults({});
    }
  });
});

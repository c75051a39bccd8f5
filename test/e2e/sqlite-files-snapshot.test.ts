/**
 * Issue 37, the snapshot's side: a first `sync` walks on its worker thread while its main thread
 * opens the snapshot again (recording the service on the first answer) and outside `sqlite3`
 * shells read the file; then kill -9. Before, that second open read the header through a raw
 * descriptor and so dropped the worker's POSIX locks, and the next outside reader to close
 * deleted the -wal under the walk. Afterwards the file passes `PRAGMA integrity_check`, the killed
 * run is not shown as succeeded, and the next sync succeeds with the sandbox's data.
 */
import BetterSqlite3 from "better-sqlite3";
import { execFileSync } from "node:child_process";
import { existsSync, mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, beforeAll, expect, it } from "vitest";
import { startSandbox, type Sandbox } from "../../src/sandbox/index.js";
import { startCli } from "../helpers/cli-process.js";
import { expectedState, snapshotState, stateToObject } from "../helpers/expected.js";
import { sandboxData } from "../helpers/sandbox-truth.js";
import { TEST_PII_KEY } from "../helpers/temp-store.js";
import { waitUntil } from "../helpers/wait.js";

let sb: Sandbox;
let dir: string;
let db: string;
beforeAll(async () => {
  sb = await startSandbox({ members: 3000, groups: 3, seed: 3702 });
  dir = mkdtempSync(join(tmpdir(), "bs-snapoutside-"));
  db = join(dir, "snap.db");
});
afterAll(async () => {
  await sb?.close();
  rmSync(dir, { recursive: true, force: true });
});

/**
 * The sqlite3 shell on the snapshot, as an operator's look at it. Its complaints are the failure's
 * message (they went to the test run's output, past the catch that meant to swallow them).
 */
const shell = (sql: string) => execFileSync("/usr/bin/sqlite3", ["-cmd", ".timeout 20000", db, sql], { encoding: "utf8", stdio: ["ignore", "pipe", "pipe"] }).trim();
/**
 * Records the walk has committed, or 0 while there is nothing to read yet: no file, or a new
 * snapshot's file before its first schema step commits (the file is created, then migrated). Any
 * other failure of the shell fails the test.
 */
function committed(): number {
  if (!existsSync(db)) return 0;
  if (shell("SELECT count(*) FROM sqlite_schema WHERE name = '_run_counts'") === "0") return 0;
  return Number(shell("SELECT coalesce(sum(seen), 0) FROM _run_counts"));
}

it("a kill -9 of a sync read from outside meanwhile leaves a sound snapshot, and the next sync completes it", async () => {
  const env = { BENEFITS_BASE_URL: sb.baseUrl, BENEFITS_API_KEY: sb.keys.full, BENEFITS_DB: db, BENEFITS_PII_KEY: TEST_PII_KEY.toString() };
  // Slow answers (the store commits on a page that arrives 500 ms after its last commit), and after
  // the first 40 the service stops answering (every later request hangs): the walk commits some
  // pages and can never end on its own, however loaded the machine, so the kill always lands
  // mid-walk. Outside readers look meanwhile.
  sb.setFaults({ latencyMs: { min: 80, max: 160 }, afterRequests: 40, hang: 1 });
  const run = startCli(["sync", "--quiet"], env, dir);
  let ended = false;
  const done = run.done.then((r) => ((ended = true), r));
  await waitUntil("the walk to commit its first records, read from outside", () => ended || committed() > 0, 60_000);
  // A few more outside reads (each opens and closes the file) while the walk holds it.
  for (let i = 0; i < 5; i++) expect(committed()).toBeGreaterThan(0);
  run.child.kill("SIGKILL");
  const killed = await done;
  expect(killed.signal, `the sync was killed mid-walk, its commits seen from outside (it ended: ${killed.code} ${killed.stderr.slice(0, 400)})`).toBe("SIGKILL");
  sb.setFaults({});

  expect(shell("PRAGMA integrity_check")).toBe("ok");
  expect(shell("SELECT count(*) FROM _runs WHERE status = 'succeeded'"), "the killed run is not shown as succeeded").toBe("0");
  const again = await startCli(["sync", "--quiet"], env, dir).done;
  expect(again.code, again.stderr).toBe(0);
  expect(shell("PRAGMA integrity_check")).toBe("ok");
  const snap = new BetterSqlite3(db, { readonly: true });
  try {
    expect(snap.prepare("SELECT status FROM runs ORDER BY run_id DESC LIMIT 1").pluck().get()).toBe("succeeded");
    const { claims: _c, ...got } = stateToObject(snapshotState(snap));
    const { claims: _w, ...want } = stateToObject(expectedState(sandboxData(sb), TEST_PII_KEY));
    expect(got).toEqual(want);
  } finally {
    snap.close();
  }
});

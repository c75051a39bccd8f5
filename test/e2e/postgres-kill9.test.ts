/**
 * `kill -9` of `benefits-sync export --sink` in the middle of its load, 10 times: after every kill
 * the warehouse is at a previous load (its `_loads` list a prefix of the runs, and its tables equal
 * the snapshot as of the last of them), and the next load completes. A warehouse that got all runs
 * is emptied, so that every round has a load to kill. Each kill lands at a point seen on the
 * server, not at a millisecond: once the load's open transaction holds N table and index locks
 * (they only grow until its COMMIT), N drawn from a seeded generator.
 */
import BetterSqlite3 from "better-sqlite3";
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { ExitCode } from "../../src/cli/exit-codes.js";
import { startSandbox, type Sandbox } from "../../src/sandbox/index.js";
import { startCli } from "../helpers/cli-process.js";
import { waitUntil } from "../helpers/wait.js";
import { usePostgres } from "../helpers/pg.js";
import { ALL_CLAIMS } from "../helpers/sandbox-truth.js";
import { runCli } from "../unit/cli/run-cli.js";
import { postgresSink } from "../../src/sinks/postgres/postgres-sink.js";
import { writeDelivery } from "../../src/sinks/sink.js";
import { snapshotAsOf, warehouse } from "../integration/sinks/warehouse-compare.js";

const ROUNDS = Number(process.env.KILL9_ROUNDS ?? 10);
const SEED = Number(process.env.KILL9_SEED ?? 20261123);
const pg = usePostgres();
let sb: Sandbox;
let dir: string;
let env: Record<string, string>;
const window = ["--claims-since", ALL_CLAIMS.from, "--claims-until", ALL_CLAIMS.to];

beforeAll(async () => {
  sb = await startSandbox({ members: 1500, groups: 4, seed: 9 });
  dir = mkdtempSync(join(tmpdir(), "bsync-pgkill-"));
  env = { BENEFITS_BASE_URL: sb.baseUrl, BENEFITS_API_KEY: sb.keys.full, BENEFITS_DB: join(dir, "snap.db"), BENEFITS_PII_KEY: "pg-kill9-test-pii-key-0123456789" };
  for (let i = 0; i < 3; i++) {
    if (i > 0) await sb.advance();
    expect((await runCli(["sync", ...window, "--quiet"], { env, cwd: dir })).code).toBe(ExitCode.OK);
  }
});
afterAll(async () => {
  await sb?.close();
  if (dir) rmSync(dir, { recursive: true, force: true });
});

/** The most locks a kill waits for: fewer than any load here takes before its COMMIT. */
const MOST_LOCKS = 12;
/** Relation locks held by the open transaction of a benefits-sync load (0 when none is open). */
const LOCKS =
  "SELECT count(*) AS n FROM pg_locks l JOIN pg_stat_activity a ON a.pid = l.pid " +
  "WHERE a.application_name = 'benefits-sync' AND a.xact_start IS NOT NULL AND l.locktype = 'relation' AND l.granted";

describe("kill -9 during a warehouse load", () => {
  it(`${ROUNDS} kills mid-load leave the warehouse at a previous load, and the next load completes (seed ${SEED})`, async (ctx) => {
    const url = await pg.freshDatabase(ctx);
    let s = SEED;
    const rand = () => ((s = (Math.imul(s, 1103515245) + 12345) >>> 0), s / 2 ** 32);
    const db = new BetterSqlite3(env.BENEFITS_DB!, { readonly: true });
    // Each round starts from a known previous load: the empty tables (a first load follows, the
    // longest) or run 1 (a later load follows), so every round has a load to kill.
    const resetTo = async (upto: number) => {
      await pg.query(url, "DROP SCHEMA IF EXISTS benefits_sync CASCADE");
      await writeDelivery(db, postgresSink(url), { folderRun: upto, runs: upto ? [upto] : [] });
    };
    let midTransaction = 0;
    const seen: string[] = [];
    try {
      for (let round = 0; round < ROUNDS; round++) {
        // Alternate the target run, so that kills land in first loads and in later ones.
        const run = round % 2 === 0 ? 2 : 3;
        await resetTo(round % 4 < 2 ? 0 : 1);
        const before = (await warehouse(pg.query, url)).loads;
        const cli = startCli(["export", "--run", String(run), "--sink", url, "--quiet"], env, dir);
        // Kill once the load's transaction holds `locks` locks (seeded), or note that it ended first.
        const locks = 1 + Math.floor(rand() * MOST_LOCKS);
        const held = async () => Number((await pg.query<{ n: string }>(url, LOCKS))[0]!.n);
        let exited = false;
        const done = cli.done.then(() => (exited = true));
        await waitUntil(`the load of round ${round} to hold ${locks} locks`, async () => exited || (await held()) >= locks);
        const killed = !exited;
        if (killed) {
          cli.child.kill("SIGKILL");
          midTransaction++;
        }
        await done;
        // The server ends the dead client's transaction; wait until its backend is gone.
        await waitUntil("the killed load's backend to end", async () => Number((await pg.query<{ n: string }>(url, "SELECT count(*) AS n FROM pg_stat_activity WHERE application_name = 'benefits-sync'"))[0]!.n) === 0);
        const w = await warehouse(pg.query, url);
        seen.push(`${!killed ? "ended" : `killed at ${locks} locks`}: ${w.loads.join(",")}`);
        // As before the load, or with every run up to the one asked for: never part of a load.
        expect([before, [1, 2, 3].filter((r) => r <= Math.max(run, before.at(-1) ?? 0))]).toContainEqual(w.loads);
        const asOf = w.loads.at(-1) ?? 0;
        const snap = snapshotAsOf(db, asOf);
        expect(w.current).toEqual(snap.current);
        expect(w.history).toEqual(snap.history);
      }
      console.log(`kill -9 rounds: warehouse loads after each kill: ${seen.join(" | ")}; ${midTransaction} kills inside a load's transaction`);
      // Most kills must have landed inside a load's transaction (a load that ended before its
      // point was reached is not one), or the test proves little.
      expect(midTransaction).toBeGreaterThanOrEqual(Math.ceil(ROUNDS * 0.6));
      const done = await runCli(["export", "--run", "3", "--sink", url, "--json"], { env, cwd: dir });
      expect(done.code, done.stderr).toBe(ExitCode.OK);
      const w = await warehouse(pg.query, url);
      expect(w.loads).toEqual([1, 2, 3]);
      const snap = snapshotAsOf(db, 3);
      expect(w.current).toEqual(snap.current);
      expect(w.history).toEqual(snap.history);
      expect(snap.current.members.length).toBeGreaterThan(1000);
    } finally {
      db.close();
    }
  });
});

/**
 * Durability of the 2xx, and of what follows it: the built CLI `webhooks serve` receives and
 * applies events about a sandbox's real members, and is killed with SIGKILL at a seeded moment
 * (after the N-th 2xx, N drawn per round, so a loaded machine changes when the kill lands but not
 * where), ten rounds. Each round the sandbox lives a day first, so some members really changed; a
 * load generator in another process sends 1,000 signed events over 64 connections, each with its
 * own id, naming the sandbox's members in turn. After the restart, once nothing is pending, every
 * event that got a 2xx is applied (neither parked nor pending). The whole round is then sent again,
 * as the service's retries would: every id is in the inbox once, applied by a run that succeeded,
 * and the round's runs recorded exactly the day's changes of members and coverages, one version
 * per real change, so the members and coverages equal the sandbox's. The restarted receiver is the
 * next round's victim (its worker ticking, as in production); the last one stops on SIGTERM with 143.
 */
import BetterSqlite3 from "better-sqlite3";
import { spawn } from "node:child_process";
import { mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { dirname, join } from "node:path";
import { createInterface } from "node:readline";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { startSandbox, type Sandbox } from "../../src/sandbox/index.js";
import { CLI, startCli, type CliRun } from "../helpers/cli-process.js";
import { diffStates, expectedState, recordedChanges, snapshotState, type State } from "../helpers/expected.js";
import { sandboxData } from "../helpers/sandbox-truth.js";
import { TEST_PII_KEY } from "../helpers/temp-store.js";
import { waitUntil } from "../helpers/wait.js";
import { serveWebhooks, stopAll } from "../helpers/webhooks-serve.js";
import { Rng } from "../sim/rng.js";

const ROUNDS = Number(process.env.WEBHOOK_KILL9_ROUNDS ?? 10);
const EVENTS = 1000;
const SECRET = "whsec-kill9-0123456789abcdef";
const LOAD = join(dirname(CLI), "..", "..", "bench", "webhook-load.js");

let dir: string;
let sb: Sandbox | undefined;
let env: Record<string, string>;
beforeAll(async () => {
  dir = mkdtempSync(join(tmpdir(), "bs-whkill-"));
  // About three events per member and round: several events of one member coalesce into one refetch.
  sb = await startSandbox({ members: 300, groups: 3, seed: 20261124 });
  env = { BENEFITS_BASE_URL: sb.baseUrl, BENEFITS_API_KEY: sb.keys.full, BENEFITS_DB: join(dir, "snap.db"), BENEFITS_PII_KEY: TEST_PII_KEY.toString(), BENEFITS_WEBHOOK_SECRET: SECRET };
});
/** Every receiver started: one a failed round left running is stopped, not left behind. */
const started: CliRun[] = [];
afterAll(async () => {
  await stopAll(started);
  await sb?.close();
  rmSync(dir, { recursive: true, force: true });
});

const serve = () => serveWebhooks(env, dir, started);

/** The load generator: calls `onOk` with each id the moment its 2xx arrives; resolves with its summary. */
function load(url: string, prefix: string, members: string, onOk: (id: string) => void): Promise<{ ok: number; failed: number }> {
  const child = spawn(process.execPath, [LOAD, url, SECRET, String(EVENTS), "64", prefix, members], { stdio: ["ignore", "pipe", "inherit"] });
  let summary: { ok: number; failed: number } | undefined;
  createInterface({ input: child.stdout }).on("line", (line) => {
    if (line.startsWith("ok ")) onOk(line.slice(3));
    else summary = JSON.parse(line) as { ok: number; failed: number };
  });
  return new Promise((resolve, reject) => child.once("close", (code) => (code === 0 && summary ? resolve(summary) : reject(new Error(`load generator exited ${code}`)))));
}

function read<T>(file: string, f: (db: BetterSqlite3.Database) => T): T {
  const db = new BetterSqlite3(join(dir, file), { readonly: true });
  try {
    return f(db);
  } finally {
    db.close();
  }
}
type Row = { id: string; state: string; runId: number | null };
const inbox = () => read("snap.inbox.db", (db) => db.prepare("SELECT event_id AS id, state, run_id AS runId FROM inbox_events").all() as Row[]);
const pending = () => read("snap.inbox.db", (db) => db.prepare("SELECT count(*) FROM inbox_events WHERE state = 'pending'").pluck().get() as number);

/** Wait until the receiver's own worker has taken every pending event (applied or parked). */
function drained(receiver: CliRun, what: string): Promise<true> {
  return waitUntil(what, () => {
    if (receiver.child.exitCode !== null || receiver.child.signalCode !== null) throw new Error(`the receiver ended (${receiver.child.exitCode ?? receiver.child.signalCode}) while events were pending`);
    return pending() === 0;
  });
}

describe("kill -9 of the receiver under 1,000 concurrent events about real members", () => {
  it(`every event that got a 2xx is applied after the restart, none twice (${ROUNDS} rounds)`, { timeout: Math.max(120_000, ROUNDS * 30_000) }, async () => {
    const first = await startCli(["sync", "--quiet"], env, dir).done;
    expect(first.code, first.stderr).toBe(0);
    const rng = new Rng(20261124);
    const promised = new Set<string>();
    const membersFile = join(dir, "members.txt");
    // The receiver restarted after one round's kill is the next round's victim.
    let victim = await serve();
    for (let round = 0; round < ROUNDS; round++) {
      // A day of the service: what it changes is what this round's events must bring, once.
      const before = expectedState(sandboxData(sb!), TEST_PII_KEY);
      const day = await sb!.advance();
      const after = expectedState(sandboxData(sb!), TEST_PII_KEY);
      const live = [...sb!.iterate("members")].map((m) => m.id);
      const isLive = new Set(live);
      writeFileSync(membersFile, `${live.join("\n")}\n`);
      const lastRun = read("snap.db", (db) => db.prepare("SELECT coalesce(max(run_id), 0) FROM runs").pluck().get() as number);

      const killAfter = rng.between(1, EVENTS - 1);
      const prefix = `r${round}`;
      let acks = 0;
      const target = victim;
      const summary = await load(target.url, prefix, membersFile, (id) => {
        promised.add(id);
        if (++acks === killAfter) target.run.child.kill("SIGKILL");
      });
      const died = await target.run.done;
      // The kill landed mid-load: some events were refused by a dead receiver.
      expect(died.signal, `round ${round}: killed after the ${killAfter}th 2xx`).toBe("SIGKILL");
      expect(summary.ok).toBeGreaterThanOrEqual(killAfter);
      expect(summary.ok + summary.failed).toBe(EVENTS);

      // Restart: once its worker has drained the inbox, every promise is kept: applied, not parked, not pending.
      const again = await serve();
      await drained(again.run, `round ${round}: the inbox drained after the restart`);
      const states = new Map(inbox().map((r) => [r.id, r.state]));
      const notApplied = [...promised].filter((id) => states.get(id) !== "applied").map((id) => `${id}: ${states.get(id) ?? "not in the inbox"}`);
      expect(notApplied, `round ${round}: events answered 2xx but not applied`).toEqual([]);

      // The sender's retries: the whole round again, every event 2xx, each stored and applied once.
      const resent = await load(again.url, prefix, membersFile, () => undefined);
      expect(resent).toMatchObject({ ok: EVENTS, failed: 0 });
      await drained(again.run, `round ${round}: the resent events drained`);
      victim = again;
      const rows = inbox();
      expect(rows.length).toBe(new Set(rows.map((r) => r.id)).size);
      expect(rows.length).toBe((round + 1) * EVENTS);
      expect(rows.filter((r) => r.state !== "applied")).toEqual([]);

      read("snap.db", (db) => {
        // Each event was marked applied by a run that committed (a run the kill cut short marks nothing).
        const succeeded = new Set(db.prepare("SELECT run_id FROM runs WHERE job = 'webhooks' AND status = 'succeeded'").pluck().all() as number[]);
        expect(rows.filter((r) => r.runId === null || !succeeded.has(r.runId))).toEqual([]);
        // The round's runs recorded the day's changes of members and coverages, each once. A member
        // deleted today answers 404 and is kept, with its coverages, until a full walk proves it gone.
        const gone = new Set(day.changes.members.deleted);
        const ofGone = (line: string) => {
          const [resource, op, id] = line.split(" ") as [string, string, string];
          return op === "delete" && (resource === "members" ? gone.has(id) : gone.has((before.coverages.get(id) as { memberId: string }).memberId));
        };
        const dayChanges = diffStates(before, after).filter((c) => /^(members|coverages) /.test(c) && !ofGone(c));
        expect(dayChanges.length, `round ${round}: the day changed no member`).toBeGreaterThan(0);
        const roundRuns = db.prepare("SELECT run_id FROM runs WHERE run_id > ?").pluck().all(lastRun) as number[];
        expect(recordedChanges(db, roundRuns).filter((c) => /^(members|coverages) /.test(c)), `round ${round}`).toEqual(dayChanges);
        // So every live member, with its coverages, equals the sandbox's.
        const got = snapshotState(db);
        const pick = (s: State) => ({
          members: live.map((id) => [id, s.members.get(id) ?? null]),
          coverages: [...s.coverages].filter(([, c]) => isLive.has((c as { memberId: string }).memberId)).sort(([a], [b]) => a.localeCompare(b)),
        });
        expect(pick(got), `round ${round}`).toEqual(pick(after));
      });
    }
    victim.run.child.kill("SIGTERM");
    expect((await victim.run.done).code).toBe(143);
    // No record was ever given a version equal to the one before it (an event applied twice over a change).
    read("snap.db", (db) => {
      for (const r of ["members", "coverages"]) {
        const repeats = db.prepare(`SELECT id FROM (SELECT id, hash, lag(hash) OVER (PARTITION BY id ORDER BY valid_from_run) AS prev FROM ${r}_history) WHERE hash = prev`).pluck().all();
        expect(repeats, r).toEqual([]);
      }
    });
  });
});

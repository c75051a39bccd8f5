import BetterSqlite3 from "better-sqlite3";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { existsSync, mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { createClient } from "../../src/api/client.js";
import { openDatabase } from "../../src/store/file/database.js";
import { SnapshotStore } from "../../src/store/snapshot.js";
import { sync } from "../../src/pipeline/sync.js";
import { startSandbox, type Sandbox } from "../../src/sandbox/index.js";
import { startCli } from "../helpers/cli-process.js";
import { expectedState, snapshotState, stateToObject } from "../helpers/expected.js";
import { ALL_CLAIMS, changeSetLines, sandboxData } from "../helpers/sandbox-truth.js";
import { syncStarted, TEST_PII_KEY } from "../helpers/temp-store.js";
import { waitUntil } from "../helpers/wait.js";

/**
 * `kill -9` during a walk (10 here; `KILL9_ROUNDS=50 npm run test:kill9` for the long version):
 * after every kill the file passes `PRAGMA integrity_check`, and the next run converges to the
 * sandbox's data with every change recorded exactly once. Each kill lands at a point seen in the
 * file, not at a millisecond: the run's start (its row, before or at its first commit) or once it
 * has committed N records, N drawn from a seeded generator, so that a loaded machine changes when
 * the kills happen but not where in the walk.
 */
const ROUNDS = Number(process.env.KILL9_ROUNDS ?? 10);
const PHASE_A = Math.floor(ROUNDS / 2);
/** Latency per request, so that a walk lasts several seconds and the polls see each commit. */
const SLOW = { latencyMs: { min: 80, max: 160 } };

let sb: Sandbox;
let dir: string;
let dbPath: string;
const seeded = (() => {
  let s = 20261122;
  return () => ((s = (Math.imul(s, 1103515245) + 12345) >>> 0), s / 2 ** 32);
})();

beforeAll(async () => {
  sb = await startSandbox({ members: 1500, groups: 4, seed: 5 });
  sb.setFaults(SLOW);
  dir = mkdtempSync(join(tmpdir(), "bsync-kill9-"));
  dbPath = join(dir, "snapshot.db");
});
afterAll(async () => {
  await sb?.close();
  rmSync(dir, { recursive: true, force: true });
});

/**
 * One number read from the file while a run may be writing it, or `fallback` when it cannot be
 * read yet (no file, or mid-migration).
 */
function peek(sql: string, params: unknown[], fallback: number): number {
  if (!existsSync(dbPath)) return fallback;
  try {
    const db = new BetterSqlite3(dbPath, { readonly: true, fileMustExist: true });
    try {
      return (db.prepare(sql).pluck().get(...params) as number | undefined) ?? fallback;
    } finally {
      db.close();
    }
  } catch {
    return fallback;
  }
}

/** The newest run in the file, or 0. */
const lastRunId = () => peek("SELECT COALESCE(MAX(run_id), 0) FROM _runs", [], 0);
/** Whether run `runId` has its row (it took the snapshot). */
const hasStarted = (runId: number) => peek("SELECT COUNT(*) FROM _runs WHERE run_id = ?", [runId], 0) > 0;
/** Records run `runId` has committed (its counts are written with each commit of pages). */
const committedRecords = (runId: number) => peek("SELECT COALESCE(SUM(seen), 0) FROM _run_counts WHERE run_id = ?", [runId], 0);
/** The most records a kill waits for: well inside any one walk (a first walk sees thousands). */
const MOST_RECORDS = 400;

/**
 * One run killed with SIGKILL at a seeded point: a quarter of the draws at its start (its row is
 * there; often no page is stored yet), the rest once it has committed N records (1..MOST_RECORDS),
 * so that kills land mid-walk with work stored, however loaded the machine.
 */
async function killedRun(round: number): Promise<string> {
  const before = lastRunId();
  const run = startCli(["sync", "--claims-since", ALL_CLAIMS.from, "--claims-until", ALL_CLAIMS.to, "--json", "--quiet"], {
    BENEFITS_BASE_URL: sb.baseUrl,
    BENEFITS_API_KEY: sb.keys.full,
    BENEFITS_DB: dbPath,
    BENEFITS_PII_KEY: TEST_PII_KEY.toString("utf8"),
  });
  let exited = false;
  const res0 = run.done.then((r) => ((exited = true), r));
  const p = seeded();
  const records = p < 0.25 ? 0 : 1 + Math.floor(((p - 0.25) / 0.75) * MOST_RECORDS);
  const when = records === 0 ? "at its start" : `after ${records} records committed`;
  await waitUntil(`run ${before + 1} in round ${round} to reach its kill point (${when})`, () => exited || (records === 0 ? hasStarted(before + 1) : committedRecords(before + 1) >= records));
  if (!exited) run.child.kill("SIGKILL");
  const res = await res0;
  const db = openDatabase(dbPath);
  try {
    expect(db.pragma("integrity_check", { simple: true })).toBe("ok");
  } finally {
    db.close();
  }
  return res.signal === "SIGKILL" ? `killed ${when}` : `finished (${res.code})`;
}

async function finalRun() {
  sb.setFaults({});
  const client = createClient({ baseUrl: sb.baseUrl, apiKey: sb.keys.full });
  const db = openDatabase(dbPath);
  try {
    const store = new SnapshotStore(db, { piiKey: TEST_PII_KEY });
    const report = await syncStarted({ source: client, store, claimsWindow: ALL_CLAIMS });
    expect(report.status).toBe("succeeded");
    expect(db.prepare("SELECT COUNT(*) FROM runs WHERE status = 'running'").pluck().get()).toBe(0);
    expect(stateToObject(snapshotState(db))).toEqual(stateToObject(expectedState(sandboxData(sb), TEST_PII_KEY)));
    return report.runId;
  } finally {
    db.close();
    await client.close();
  }
}

function changesBetween(fromRun: number, toRun: number): string[] {
  const db = openDatabase(dbPath);
  try {
    return (db.prepare("SELECT resource, op, id FROM changes WHERE run_id > ? AND run_id <= ?").all(fromRun, toRun) as { resource: string; op: string; id: string }[])
      .map((c) => `${c.resource} ${c.op} ${c.id}`)
      .sort();
  } finally {
    db.close();
  }
}

describe(`kill -9 at random moments (${ROUNDS} rounds)`, () => {
  // Its own timeout, from the rounds: 10 take 20 s on a loaded machine, `npm run test:kill9` runs 50.
  it("leaves a consistent file, and the next run converges with no change recorded twice or lost", { timeout: Math.max(120_000, ROUNDS * 15_000) }, async () => {
    const outcomes: string[] = [];
    // Phase A: kills during the very first walk; in the end every record is inserted exactly once.
    for (let i = 0; i < PHASE_A; i++) outcomes.push(await killedRun(i));
    const runA = await finalRun();
    const inserts = changesBetween(0, runA);
    const truth = expectedState(sandboxData(sb), TEST_PII_KEY);
    const expectedInserts = Object.entries(truth).flatMap(([r, m]) => [...m.keys()].map((id) => `${r} insert ${id}`)).sort();
    expect(inserts).toEqual(expectedInserts);

    // Phase B: a simulated day, then kills during the walk that records it.
    const cs = await sb.advance();
    sb.setFaults(SLOW);
    for (let i = PHASE_A; i < ROUNDS; i++) outcomes.push(await killedRun(i));
    const runB = await finalRun();
    expect(changesBetween(runA, runB)).toEqual(changeSetLines(cs));
    // Most rounds must really have been killed mid-way, or the test proves little.
    expect(outcomes.filter((o) => o.startsWith("killed")).length).toBeGreaterThanOrEqual(Math.ceil(ROUNDS * 0.6));
    // And some runs must have resumed a killed walk (rather than every kill landing before the first page).
    const db = openDatabase(dbPath);
    const resumed = db.prepare("SELECT COUNT(*) FROM runs WHERE resumed_from IS NOT NULL").pluck().get() as number;
    const partial = db.prepare("SELECT COUNT(*) FROM runs WHERE status = 'failed' AND inserted + updated + deleted > 0").pluck().get() as number;
    if (process.env.KILL9_VERBOSE) console.log(outcomes, db.prepare("SELECT run_id, status, resumed_from, inserted, updated, deleted, error FROM runs").all());
    db.close();
    expect(resumed).toBeGreaterThan(0);
    expect(partial).toBeGreaterThan(0);
  });
});

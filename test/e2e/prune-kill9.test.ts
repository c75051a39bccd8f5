/**
 * `benefits-sync prune` killed with SIGKILL (as `kill -9`) at every step a prune takes: inside the
 * transaction that records and removes the runs and right after it, inside each batch of closed
 * versions and right after it, in the vacuum. Whatever point it dies at, nothing a kept run sees is
 * lost (every answer as of each kept run, each kept run's changes, the current versions), the file
 * passes SQLite's integrity check, the runs are removed all together or not at all, and the next
 * prune ends exactly where an uninterrupted one does.
 */
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { copyFileSync, mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import BetterSqlite3 from "better-sqlite3";
import type { Database } from "better-sqlite3";
import { createClient } from "../../src/api/client.js";
import { startSandbox } from "../../src/sandbox/sandbox.js";
import { openDatabase } from "../../src/store/file/database.js";
import { SnapshotStore } from "../../src/store/snapshot.js";
import { StoredResources } from "../../src/store/schema/resources.js";
import { startCli } from "../helpers/cli-process.js";
import { ALL_CLAIMS } from "../helpers/sandbox-truth.js";
import { syncStarted, TEST_PII_KEY } from "../helpers/temp-store.js";

const PRELOAD = fileURLToPath(new URL("../helpers/kill-mid-prune.cjs", import.meta.url));
const KEEP = 3;
let dir: string;
let base: string;
let runs: number[] = [];

beforeAll(async () => {
  dir = mkdtempSync(join(tmpdir(), "bsync-prune-kill9-"));
  base = join(dir, "base.db");
  const sb = await startSandbox({ members: 800, seed: 11, groups: 3 });
  const client = createClient({ baseUrl: sb.baseUrl, apiKey: sb.keys.full });
  const db = openDatabase(base);
  const store = new SnapshotStore(db, { piiKey: TEST_PII_KEY, commitEveryPages: 4 });
  try {
    for (let day = 0; day < 7; day++) {
      if (day > 0) for (let k = 0; k < 3; k++) await sb.advance();
      runs.push((await syncStarted({ source: client, store, claimsWindow: ALL_CLAIMS })).runId);
    }
    db.pragma("wal_checkpoint(TRUNCATE)");
  } finally {
    db.close();
    await client.close();
    await sb.close();
  }
}, 180_000);

afterAll(() => rmSync(dir, { recursive: true, force: true }));

/** What the kept runs see: per kept run, the versions current as of it and its changes; the current versions. */
function kept(db: Database, from: number): string {
  const out: unknown[] = [];
  for (const run of runs.filter((r) => r >= from)) {
    for (const r of StoredResources) {
      out.push(db.prepare(`SELECT group_concat(vid) FROM (SELECT vid FROM _${r}_v WHERE valid_from_run <= ? AND (valid_to_run IS NULL OR valid_to_run > ?) ORDER BY vid)`).pluck().get(run, run));
    }
    out.push(db.prepare("SELECT resource, id, op, changed_fields FROM changes WHERE run_id = ? ORDER BY resource, id, op").all(run));
    out.push(db.prepare("SELECT * FROM field_changes WHERE run_id = ? ORDER BY resource, id, field").all(run));
    out.push(db.prepare("SELECT * FROM runs WHERE run_id = ?").all(run));
  }
  for (const r of StoredResources) out.push(db.prepare(`SELECT group_concat(x) FROM (SELECT vid || ':' || hash AS x FROM _${r}_v JOIN _${r}_d USING (vid) WHERE valid_to_run IS NULL ORDER BY vid)`).pluck().get());
  return JSON.stringify(out);
}

/** Everything a finished prune leaves: the kept runs' answers, the pruned runs' lines, what history is left. */
function finished(db: Database, from: number): string {
  const left = StoredResources.map((r) => db.prepare(`SELECT count(*) FROM _${r}_v`).pluck().get());
  return JSON.stringify([kept(db, from), db.prepare("SELECT run_id, job, status, started_at, inserted FROM runs ORDER BY run_id").all(), left]);
}

function copyBase(name: string): string {
  const path = join(dir, `${name}.db`);
  copyFileSync(base, path);
  return path;
}

const prune = (path: string, kill?: string) =>
  startCli(["prune", "--keep-runs", String(KEEP), "--db", path], { HOME: dir, ...(kill ? { KILL_MID_PRUNE: kill, NODE_OPTIONS: `--require ${PRELOAD}` } : {}) }, dir).done;

describe("prune killed with SIGKILL at each step", () => {
  it("loses nothing a kept run sees, and the next prune ends where an uninterrupted one does", async () => {
    const keepFrom = runs[runs.length - KEEP]!;
    const control = copyBase("control");
    const c = await prune(control);
    expect(c.code, c.stderr).toBe(0);
    const cdb = new BetterSqlite3(control, { readonly: true });
    const want = finished(cdb, keepFrom);
    cdb.close();
    const original = new BetterSqlite3(base, { readonly: true });
    const before = kept(original, keepFrom);
    const runsBefore = original.prepare("SELECT count(*) FROM _runs").pluck().get();
    original.close();

    const points = ["runs:1", "runs:1:after", ...[1, 2, 3, 4, 5, 6].flatMap((k) => [`versions:${k}`, `versions:${k}:after`]), "vacuum:1"];
    const killed: string[] = [];
    for (const point of points) {
      const path = copyBase(point.replace(/:/g, "-"));
      const r = await prune(path, point);
      if (r.signal === "SIGKILL") killed.push(point);
      else expect(r.code, `${point}: ${r.stderr}`).toBe(0);
      const db = openDatabase(path);
      try {
        expect(db.pragma("integrity_check", { simple: true }), point).toBe("ok");
        expect(kept(db, keepFrom), point).toBe(before);
        // The runs went all together, or none did; each one removed left its line.
        const left = db.prepare("SELECT count(*) FROM _runs").pluck().get();
        const lines = db.prepare("SELECT count(*) FROM _pruned_runs").pluck().get();
        expect([left, lines], point).toContainEqual(left === runsBefore ? runsBefore : KEEP);
        expect((left as number) + (lines as number), point).toBe(runsBefore);
      } finally {
        db.close();
      }
      const again = await prune(path);
      expect(again.code, `${point}, pruned again: ${again.stderr}`).toBe(0);
      const adb = new BetterSqlite3(path, { readonly: true });
      try {
        expect(finished(adb, keepFrom), point).toBe(want);
      } finally {
        adb.close();
      }
    }
    // Every point of the first two steps was reached (the vacuum only when pages were freed).
    expect(killed.filter((p) => !p.startsWith("vacuum"))).toEqual(points.filter((p) => !p.startsWith("vacuum")));
  }, 300_000);
});

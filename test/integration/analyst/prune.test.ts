/**
 * History retention (src/store/retention/prune.ts) on a snapshot of six runs over five sandbox days: every
 * question of the analyst guide, as printed, answers the same for every run a prune keeps; the
 * versions it removes are exactly those that ended before the first run kept; a prune that an
 * output or the reconciliation job holds back changes nothing and names what holds it.
 */
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { copyFileSync } from "node:fs";
import { join } from "node:path";
import BetterSqlite3 from "better-sqlite3";
import type { Database } from "better-sqlite3";
import { deliver } from "../../../src/sinks/ledger.js";
import { openDatabase } from "../../../src/store/file/database.js";
import { planPrune } from "../../../src/store/retention/prune-plan.js";
import { prune, PruneHeldError } from "../../../src/store/retention/prune.js";
import { StoredResources } from "../../../src/store/schema/resources.js";
import { guideQuestions, guideWorld } from "../../helpers/guide-questions.js";
import { ALL_CLAIMS } from "../../helpers/sandbox-truth.js";
import { syncStarted, type TempStore } from "../../helpers/temp-store.js";

const questions = guideQuestions();
type Row = Record<string, unknown>;

let t: TempStore;
let runs: number[] = [];
const cleanups: (() => Promise<void> | void)[] = [];

beforeAll(async () => {
  const w = await guideWorld();
  cleanups.push(w.cleanup);
  t = w.t;
  for (let day = 0; day < 6; day++) {
    if (day > 0) await w.sb.advance();
    const r = await syncStarted({ source: w.client, store: t.store, claimsWindow: ALL_CLAIMS });
    expect(r.status).toBe("succeeded");
    runs.push(r.runId);
  }
}, 120_000);

afterAll(async () => {
  for (const c of cleanups.reverse()) await c();
});

/** A copy of the six-run snapshot to prune, on its own connection. */
function copy(name: string): Database {
  t.db.pragma("wal_checkpoint(TRUNCATE)");
  const path = join(t.dir, `${name}.db`);
  copyFileSync(t.path, path);
  const db = openDatabase(path);
  cleanups.push(() => {
    db.close();
  });
  return db;
}

/** Every guide answer that is about kept runs: the unparameterised ones, and each kept run's, each member's, each claim's. */
function answers(db: Database, kept: readonly number[], ids: { members: string[]; claims: string[] }): Map<string, Row[]> {
  const out = new Map<string, Row[]>();
  const { members, claims } = ids;
  for (const [name, sql] of questions) {
    const stmt = db.prepare(sql);
    if (sql.includes(":run_id")) for (const run of kept) out.set(`${name} run ${run}`, stmt.all({ run_id: run }) as Row[]);
    else if (sql.includes(":member_id")) for (const id of members) out.set(`${name} ${id}`, stmt.all({ member_id: id }) as Row[]);
    else if (sql.includes(":claim_id")) {
      // The versions a kept run saw, or that a kept run's change replaced: those that ended at or after the first kept run.
      for (const id of claims) out.set(`${name} ${id}`, (stmt.all({ claim_id: id }) as Row[]).filter((r) => r.valid_to_run === null || (r.valid_to_run as number) >= kept[0]!));
    } else out.set(name, stmt.all() as Row[]);
  }
  return out;
}

const closedBefore = (db: Database, run: number) =>
  StoredResources.reduce((n, r) => n + (db.prepare(`SELECT count(*) FROM _${r}_v WHERE valid_to_run < ? AND ended_by IS NOT NULL`).pluck().get(run) as number), 0);
const current = (db: Database) => StoredResources.map((r) => db.prepare(`SELECT group_concat(vid) FROM (SELECT vid FROM _${r}_v WHERE valid_to_run IS NULL ORDER BY vid)`).pluck().get());

describe("prune", () => {
  it("keeps every guide answer about the runs it keeps, and removes only what ended before them", () => {
    const db = copy("keep3");
    const kept = runs.slice(3);
    // Members with claims, and claims with several versions (before the prune: some of those versions go).
    const ids = {
      members: db.prepare("SELECT DISTINCT memberId FROM claims ORDER BY memberId LIMIT 20").pluck().all() as string[],
      claims: db.prepare("SELECT id FROM _claims_v GROUP BY id HAVING count(*) > 1 ORDER BY id LIMIT 40").pluck().all() as string[],
    };
    expect(ids.claims.length).toBeGreaterThan(5);
    const before = answers(db, kept, ids);
    const runsBefore = db.prepare("SELECT * FROM runs WHERE run_id >= ? ORDER BY run_id").all(kept[0]) as Row[];
    const currentBefore = current(db);
    const closed = closedBefore(db, kept[0]!);
    expect(closed).toBeGreaterThan(20);

    const res = prune(db, { keepRuns: 3 });
    expect(res.plan.keepFrom).toBe(kept[0]);
    expect(res.runsRemoved).toBe(3);
    expect(Object.values(res.versionsRemoved).reduce((a, b) => a + b, 0)).toBe(closed);
    expect(closedBefore(db, kept[0]!)).toBe(0);
    expect(current(db)).toEqual(currentBefore);
    const after = answers(db, kept, ids);
    expect([...after.keys()]).toEqual([...before.keys()]);
    for (const [k, v] of before) expect(after.get(k), k).toEqual(v);
    // The kept runs are listed as they were; the removed ones as pruned, with their counts.
    expect(db.prepare("SELECT * FROM runs WHERE run_id >= ? ORDER BY run_id").all(kept[0])).toEqual(runsBefore);
    const pruned = db.prepare("SELECT run_id, status, inserted FROM runs WHERE run_id < ? ORDER BY run_id").all(kept[0]) as Row[];
    expect(pruned.map((r) => r.status)).toEqual(["pruned", "pruned", "pruned"]);
    expect(pruned[0]!.inserted).toBeGreaterThan(0);
    // A pruned run's changes are not listed at all (rather than the few whose versions remain).
    for (const run of runs.slice(0, 3)) {
      for (const view of ["changes", "change_records", "field_changes"]) expect(db.prepare(`SELECT count(*) FROM ${view} WHERE run_id = ?`).pluck().get(run), `${view} ${run}`).toBe(0);
    }
    expect(db.prepare("SELECT count(*) FROM members_history WHERE valid_from_run < ?").pluck().get(kept[0])).toBeGreaterThan(0);
    // A version begun in a pruned run and still current keeps its date.
    expect(db.prepare("SELECT count(*) FROM members_history WHERE observed_at IS NULL").pluck().get()).toBe(0);
    expect(db.pragma("integrity_check", { simple: true })).toBe("ok");
    expect(db.pragma("foreign_key_check")).toEqual([]);
    // Pruning to the same bound again finds nothing.
    const again = prune(db, { keepRuns: 3 });
    expect(again.runsRemoved).toBe(0);
    expect(Object.values(again.versionsRemoved).every((n) => n === 0)).toBe(true);
  });

  it("gives the free pages back to the disk (or rewrites the file with --vacuum) and says how many bytes", () => {
    const db = copy("bytes");
    const res = prune(db, { keepRuns: 1 });
    expect(res.vacuumed).toBe("incremental");
    expect(res.bytesAfter).toBeLessThanOrEqual(res.bytesBefore);
    expect(res.bytesFree).toBe(0);
    expect(db.pragma("freelist_count", { simple: true })).toBe(0);
    const row = db.prepare("SELECT bytes_reclaimed, runs, versions, finished_at FROM _prunes").get() as Row;
    expect(row.bytes_reclaimed).toBe(res.bytesBefore - res.bytesAfter);
    expect(row.runs).toBe(5);
    expect(row.finished_at).not.toBeNull();
    // The room the removed versions left inside pages that hold kept rows goes back with a full rewrite.
    const full = copy("bytes-full");
    const unused = (x: Database) => x.prepare("SELECT sum(unused) FROM dbstat").pluck().get() as number;
    const r2 = prune(full, { keepRuns: 1 }, { vacuum: "full" });
    expect(r2.vacuumed).toBe("full");
    expect(r2.bytesAfter).toBeLessThan(r2.bytesBefore);
    expect(r2.bytesAfter).toBeLessThan(res.bytesAfter);
    expect(unused(full)).toBeLessThan(unused(db));
    expect(full.pragma("integrity_check", { simple: true })).toBe("ok");
  });

  it("is held back, changing nothing, by an output that has not received a run it would remove", async () => {
    const db = copy("held");
    // The output received runs 1 and 2 only.
    await deliver(db, "csv:/data/deltas", runs[1]!, () => "ok");
    const fingerprint = () => [db.prepare("SELECT count(*) FROM _runs").pluck().get(), closedBefore(db, 1e9), current(db)];
    const was = fingerprint();
    let held: unknown;
    try {
      prune(db, { keepRuns: 1 }, { outputs: [{ id: "csv:/data/deltas", name: "the sink lake (sinks.lake)" }] });
    } catch (e) {
      held = e;
    }
    expect(held).toBeInstanceOf(PruneHeldError);
    const hold = (held as PruneHeldError).plan.holds;
    expect(hold).toEqual([expect.objectContaining({ kind: "output", name: "the sink lake (sinks.lake)", needsRun: runs[2] })]);
    expect((held as Error).message).toContain(`has not received run ${runs[2]}'s changes yet`);
    expect(fingerprint()).toEqual(was);
    // The ledger's own outputs hold it back too, configured or not; to a bound that keeps run 3, it goes.
    expect(planPrune(db, { keepRuns: 1 }).holds.map((h) => h.name)).toEqual(["csv:/data/deltas"]);
    const res = prune(db, { keepRuns: 4 });
    expect(res.plan.keepFrom).toBe(runs[2]);
    expect(res.runsRemoved).toBe(2);
    // An output no longer used is forgotten on purpose: its receipts go, and it holds nothing back.
    expect((held as Error).message).not.toContain("--forget-output");
    expect(planPrune(db, { keepRuns: 1 }).holds[0]!.why).toContain("if it is no longer used, `--forget-output csv:/data/deltas`");
    expect(() => prune(db, { keepRuns: 1 }, { forget: ["csv:/elsewhere"] })).toThrow(/no output of that name in the delivery ledger \(it has csv:\/data\/deltas\)/);
    const configured = [{ id: "csv:/data/deltas", name: "the sink lake (sinks.lake)" }];
    expect(() => prune(db, { keepRuns: 1 }, { outputs: configured, forget: ["csv:/data/deltas"] })).toThrow(/it is the sink lake \(sinks.lake\), which every sync delivers to/);
    const forgot = prune(db, { keepRuns: 1 }, { forget: ["csv:/data/deltas"] });
    expect(forgot.runsRemoved).toBe(3);
    expect(db.prepare("SELECT count(*) FROM _deliveries WHERE output = 'csv:/data/deltas'").pluck().get()).toBe(0);
  });

  it("is held back by the monthly reconciliation's next report, and a date bound keeps what it needs", () => {
    const db = copy("reconcile");
    // The six runs spread over three months; the report of November compares October 1st (run 2) with November 1st.
    const days = ["2026-09-20", "2026-09-28", "2026-10-05", "2026-10-20", "2026-11-03", "2026-11-20"];
    runs.forEach((r, i) => db.prepare("UPDATE _runs SET started_at = ? WHERE run_id = ?").run(`${days[i]}T02:00:00.000Z`, r));
    const now = new Date("2026-11-28T12:00:00Z");
    const opts = { reconcileJobs: ["monthly-reconcile"], now: () => now };
    const plan = planPrune(db, { keepRuns: 2 }, { ...opts, now });
    expect(plan.holds).toEqual([expect.objectContaining({ kind: "job", name: "monthly-reconcile", needsRun: runs[1] })]);
    expect(plan.holds[0]!.why).toContain("--before 2026-09-28");
    expect(() => prune(db, { keepRuns: 2 }, opts)).toThrow(PruneHeldError);
    const res = prune(db, { before: "2026-09-28" }, opts);
    expect(res.plan.keepFrom).toBe(runs[1]);
    expect(res.runsRemoved).toBe(1);
  });

  it("moves the bound earlier, never later: the last successful sync, a running run, a resumed chain", () => {
    const db = copy("moved");
    const last = runs[runs.length - 1]!;
    // Every run started before a date far ahead: the last sync is kept all the same.
    const all = planPrune(db, { before: "2099-01-01" });
    expect(all.keepFrom).toBe(last);
    expect(all.moved.join(" ")).toContain(`run ${last} is kept`);
    // Run 5 resumed run 4's walk: keeping 5 keeps 4.
    db.prepare("UPDATE _runs SET resumed_from = ? WHERE run_id = ?").run(runs[3], runs[4]);
    const chain = planPrune(db, { keepRuns: 2 });
    expect(chain.keepFrom).toBe(runs[3]);
    // A run still running is kept, and every run after it.
    db.prepare("UPDATE _runs SET status = 'running' WHERE run_id = ?").run(runs[2]);
    expect(planPrune(db, { keepRuns: 1 }).keepFrom).toBe(runs[2]);
  });

  it("an outside reader of the pruned file sees the runs view and the history as the contract says", () => {
    const db = copy("outside");
    prune(db, { keepRuns: 2 });
    db.pragma("wal_checkpoint(TRUNCATE)");
    const reader = new BetterSqlite3(db.name, { readonly: true });
    try {
      const statuses = reader.prepare("SELECT status, count(*) AS n FROM runs GROUP BY status ORDER BY status").all();
      expect(statuses).toEqual([
        { status: "pruned", n: 4 },
        { status: "succeeded", n: 2 },
      ]);
      expect(reader.prepare("SELECT min(valid_to_run) FROM members_history").pluck().get()).toBeGreaterThanOrEqual(runs[4]!);
    } finally {
      reader.close();
    }
  });
});

/**
 * The prune bench's measurements, each in its own process (bench/prune.ts):
 *   node dist/bench/prune-worker.js prune DB KEEP_RUNS    (benefits-sync's prune, as `prune --keep-runs`)
 *   node dist/bench/prune-worker.js plain DB KEEP_FROM    (the baseline, below)
 * Prints one JSON line: {ms, maxRssMb, removed, bytesBefore, bytesAfter}.
 */
import BetterSqlite3 from "better-sqlite3";
import { openDatabase } from "../src/store/file/database.js";
import { prune } from "../src/store/retention/prune.js";
import { StoredResources } from "../src/store/schema/resources.js";

const maxRssMb = () => Math.round(process.resourceUsage().maxRSS / 1024);
const pages = (db: BetterSqlite3.Database) => (db.pragma("page_count", { simple: true }) as number) * (db.pragma("page_size", { simple: true }) as number);

const [mode, path, n] = process.argv.slice(2) as [string, string, string];
if (mode === "prune") {
  const db = openDatabase(path);
  const t0 = performance.now();
  const r = prune(db, { keepRuns: Number(n) });
  const ms = performance.now() - t0;
  db.close();
  const removed = Object.values(r.versionsRemoved).reduce((a, b) => a + b, 0);
  process.stdout.write(`${JSON.stringify({ ms, removed, runs: r.runsRemoved, keepFrom: r.plan.keepFrom, bytesBefore: r.bytesBefore, bytesAfter: r.bytesAfter, full: r.vacuumed === "full" ? 1 : 0, maxRssMb: maxRssMb() })}\n`);
} else if (mode === "plain") {
  // Baseline: the fastest plain way to do the same work: in one transaction, one DELETE per version
  // table of what ended before the first kept run (through the same schema, so the versions' JSON,
  // claim lines and counts go with them, by its triggers) and one per run table; then the free pages
  // given back. No plan, no refusal, no line left per run, no batches.
  const keep = Number(n);
  const db = new BetterSqlite3(path);
  db.pragma("journal_mode = WAL");
  db.pragma("synchronous = NORMAL");
  db.pragma("cache_size = -32768");
  const bytesBefore = pages(db);
  const t0 = performance.now();
  let removed = 0;
  db.transaction(() => {
    for (const r of StoredResources) removed += db.prepare(`DELETE FROM _${r}_v WHERE valid_to_run < ? AND ended_by IS NOT NULL`).run(keep).changes;
    for (const t of ["_run_counts", "_walk", "_quarantine", "_runs"]) db.prepare(`DELETE FROM ${t} WHERE run_id < ?`).run(keep);
  })();
  db.pragma("incremental_vacuum");
  db.pragma("wal_checkpoint(TRUNCATE)");
  const ms = performance.now() - t0;
  const bytesAfter = pages(db);
  db.close();
  process.stdout.write(`${JSON.stringify({ ms, removed, bytesBefore, bytesAfter, maxRssMb: maxRssMb() })}\n`);
} else {
  throw new Error(`prune-worker: unknown mode ${mode}`);
}

/**
 * Where an output starts. A new output receives every recorded run from the first; one started
 * later on purpose (`--from-run N`, `fromRun` in a configured sink) has that start recorded in the
 * delivery ledger, as a delivery that carried nothing and marks the runs before N received, so
 * they are never pending for it. An output keeps the start it has: a later `--from-run` that
 * says otherwise is refused rather than silently skipping (or re-sending) runs.
 */
import type { Database } from "better-sqlite3";
import { hostname } from "node:os";
import { ConfigError } from "../errors.js";
import { UsageError } from "../input-errors.js";
import { prunedRun, prunedRunMessage } from "../store/retention/pruned-runs.js";

/** How a message names the start it refuses: the `--from-run` flag, or a configured sink's `fromRun` key. */
export interface StartKey {
  readonly head: (fromRun: number) => string;
  /** The advice to take the start back. */
  readonly drop: string;
}
const FLAG: StartKey = { head: (n) => `--from-run ${n}`, drop: "drop --from-run" };

/** @example sinkStartKey("lake").head(5) // "sinks.lake.fromRun" */
export const sinkStartKey = (sink: string): StartKey => ({ head: () => `sinks.${sink}.fromRun`, drop: `change or remove sinks.${sink}.fromRun` });

/** The run `output` was started at on purpose, if it was. */
export function recordedStart(db: Database, output: string): number | undefined {
  const v = db
    .prepare("SELECT json_extract(detail, '$.fromRun') FROM _deliveries WHERE output = ? AND json_extract(detail, '$.fromRun') IS NOT NULL ORDER BY delivery_id LIMIT 1")
    .pluck()
    .get(output) as number | null | undefined;
  return v ?? undefined;
}

/**
 * Record that `output` (named `where` in messages) starts at run `fromRun`, or check that it
 * already does. A ConfigError when run `fromRun` is not recorded, or when the output has received
 * runs from another start. Nothing changes when it fails.
 *
 * @example startOutput(db, "csv:/data/deltas", 12, "/data/deltas") // runs 1..11 never go there
 */
export function startOutput(db: Database, output: string, fromRun: number, where: string, now: () => Date = () => new Date()): void {
  db.transaction(() => {
    const kept = db.prepare("SELECT 1 FROM _runs WHERE run_id = ?").get(fromRun) !== undefined;
    if (!kept && !prunedRun(db, fromRun)) throw new UsageError([`--from-run ${fromRun}: no run ${fromRun} in this snapshot; \`benefits-sync runs\` lists them`]);
    if (!needsStart(db, output, fromRun, where)) return;
    // An output started before the prune keeps its start; a new one starts at a kept run.
    if (!kept) throw new UsageError([`${prunedRunMessage(db, fromRun, `--from-run ${fromRun}`)}: a new output starts at a kept run`]);
    const info = db
      .prepare("INSERT INTO _deliveries (output, for_run, runs, status, started_at, finished_at, detail) VALUES (?, ?, '[]', 'delivered', ?, ?, ?)")
      .run(output, fromRun, now().toISOString(), now().toISOString(), JSON.stringify({ fromRun, host: hostname(), note: `started at run ${fromRun} on purpose: the runs before it are not sent here` }));
    db.prepare("INSERT OR IGNORE INTO _delivered_runs (output, run_id, delivery_id) SELECT ?, run_id, ? FROM _runs WHERE run_id < ?").run(
      output,
      Number(info.lastInsertRowid),
      fromRun,
    );
  }).immediate();
}

/**
 * Whether starting `output` at `fromRun` is still to be recorded (true) or already holds (false).
 * A ConfigError when the output has received runs from another start. Reads only.
 */
export function needsStart(db: Database, output: string, fromRun: number, where: string, key: StartKey = FLAG): boolean {
  const start = recordedStart(db, output);
  if (start === fromRun) return false;
  if (start !== undefined) {
    throw new ConfigError([`${key.head(fromRun)}: ${where} was started at run ${start}; it keeps that start (${key.drop}, or give ${start}), or use a new output`]);
  }
  const first = db.prepare("SELECT MIN(run_id) FROM _delivered_runs WHERE output = ?").pluck().get(output) as number | null;
  if (first === null) return true;
  if (first === fromRun) return false;
  throw new ConfigError([
    `${key.head(fromRun)}: ${where} has already received runs from run ${first}; starting it at ${fromRun} would contradict them (${key.drop}, or use a new output)`,
  ]);
}

/**
 * Whether `fromRun` can start an output in this snapshot before a run: a recorded run, or the
 * run about to be made (the next id). A ConfigError otherwise.
 */
export function checkFromRun(db: Database | undefined, fromRun: number, key: StartKey = FLAG): void {
  const last = db ? ((db.prepare("SELECT MAX(run_id) FROM _runs").pluck().get() as number | null) ?? 0) : 0;
  const known = db !== undefined && (db.prepare("SELECT 1 FROM _runs WHERE run_id = ?").get(fromRun) !== undefined || prunedRun(db, fromRun) !== undefined);
  if (known || fromRun === last + 1) return;
  throw new ConfigError([
    `${key.head(fromRun)}: no run ${fromRun} in this snapshot (its runs are ${last ? `1 to ${last}` : "none yet"}, and this sync records run ${last + 1}); \`benefits-sync runs\` lists them`,
  ]);
}

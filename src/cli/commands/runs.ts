/** `benefits-sync runs`: the run history, newest first. */
import { UsageError } from "../../input-errors.js";
import { openSnapshotToRead, readOrExplain, requireSnapshot } from "../snapshot-to-read.js";
import type { CommandContext } from "../context.js";
import { ExitCode } from "../exit-codes.js";

export async function run(ctx: CommandContext): Promise<number> {
  const config = ctx.config();
  const limit = (ctx.options.limit as number | undefined) ?? 20;
  const abandon = ctx.options.abandon as number | undefined;
  const { openDatabase } = await import("../../store/file/database.js");
  const { listRuns } = await import("../../store/runs/run-log.js");
  // Listing only reads: the file is neither created nor converted. --abandon writes (and may convert it).
  requireSnapshot(config.db);
  const db = abandon === undefined ? openSnapshotToRead(config.db, { readOld: true }) : openDatabase(config.db);
  try {
    if (abandon !== undefined) {
      const { abandonRun } = await import("../../store/runs/run-lease.js");
      try {
        abandonRun(db, abandon, new Date());
      } catch (e) {
        throw new UsageError([`--abandon ${abandon}: ${(e as Error).message}`]);
      }
      ctx.stdout.write(`Run ${abandon} is recorded failed (abandoned by hand); the next sync resumes its walk.\n`);
      return ExitCode.OK;
    }
    // An older snapshot is listed as it is when its run log has what is listed.
    const rows = readOrExplain(db, config.db, () => listRuns(db, limit));
    if (ctx.globals.json) {
      ctx.stdout.write(`${JSON.stringify(rows.map(({ options, ...r }) => ({ ...r, options: JSON.parse(String(options)) })))}\n`);
      return ExitCode.OK;
    }
    if (rows.length === 0) {
      ctx.stdout.write("No runs yet.\n");
      return ExitCode.OK;
    }
    const cols = ["run_id", "job", "status", "started_at", "finished_at", "inserted", "updated", "deleted", "unchanged", "quarantined"] as const;
    const table = [cols.map(String), ...rows.map((r) => cols.map((c) => String(r[c] ?? "")))];
    const widths = cols.map((_, i) => Math.max(...table.map((row) => row[i]!.length)));
    for (const row of table) ctx.stdout.write(`${row.map((v, i) => v.padEnd(widths[i]!)).join("  ").trimEnd()}\n`);
    for (const r of rows.filter((x) => x.error)) ctx.stdout.write(`run ${r.run_id}: ${r.error}\n`);
    return ExitCode.OK;
  } finally {
    db.close();
  }
}

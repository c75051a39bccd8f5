/** `benefits-sync runs`: the run history, newest first. */
import { existsSync } from "node:fs";
import { ConfigError } from "../../errors.js";
import type { CommandContext } from "../context.js";
import { ExitCode } from "../exit-codes.js";

export async function run(ctx: CommandContext): Promise<number> {
  const config = ctx.config();
  const limit = (ctx.options.limit as number | undefined) ?? 20;
  if (config.db !== ":memory:" && !existsSync(config.db)) {
    throw new ConfigError([`db: no snapshot at ${config.db}; run \`benefits-sync sync\` first, or point --db at one`]);
  }
  const { openDatabase } = await import("../../store/database.js");
  const { listRuns } = await import("../../store/run-log.js");
  const db = openDatabase(config.db);
  try {
    const abandon = ctx.options.abandon as number | undefined;
    if (abandon !== undefined) {
      const { abandonRun } = await import("../../store/run-lease.js");
      try {
        abandonRun(db, abandon, new Date());
      } catch (e) {
        throw new ConfigError([`--abandon ${abandon}: ${(e as Error).message}`]);
      }
      ctx.stdout.write(`Run ${abandon} is recorded failed (abandoned by hand); the next sync resumes its walk.\n`);
      return ExitCode.OK;
    }
    const rows = listRuns(db, limit);
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

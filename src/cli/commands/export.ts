/**
 * `benefits-sync export --run N --out DIR [--format csv]`: (re)write one run's deltas under
 * DIR/N/, the same bytes each time. A re-export: the delivery ledger is neither read nor changed,
 * and the snapshot is opened read-only. Exit 0 written, 1 the folder could not be written, 2 bad
 * usage (no such run, a format not available).
 */
import { existsSync } from "node:fs";
import { join, resolve } from "node:path";
import { ConfigError } from "../../errors.js";
import type { CommandContext } from "../context.js";
import { ExitCode } from "../exit-codes.js";

/** The formats `--format` will take; only csv is written today. */
const Formats = ["csv", "jsonl", "parquet"] as const;
const Available: readonly string[] = ["csv"];

export async function run(ctx: CommandContext): Promise<number> {
  const o = ctx.options as { run?: number; out?: string; format?: string };
  const problems: string[] = [];
  if (o.run === undefined) problems.push("--run: which run to export is required (`benefits-sync runs` lists them)");
  if (o.out === undefined || o.out === "") problems.push("--out: the directory to write DIR/<run_id>/ under is required");
  const format = o.format ?? "csv";
  if (!(Formats as readonly string[]).includes(format)) {
    problems.push(`--format ${format}: unknown; expected csv (jsonl and parquet are planned)`);
  } else if (!Available.includes(format)) {
    problems.push(`--format ${format}: not available yet; only csv is written for now (--format csv, the default)`);
  }
  if (problems.length) throw new ConfigError(problems);
  const config = ctx.config();
  if (config.db !== ":memory:" && !existsSync(config.db)) {
    throw new ConfigError([`db: no snapshot at ${config.db}; run \`benefits-sync sync\` first, or point --db at one`]);
  }
  const { openDatabase } = await import("../../store/database.js");
  const { writeRunCsv } = await import("../../sinks/csv/write-run-csv.js");
  const { OutputError } = await import("../../sinks/output-error.js");
  const db = openDatabase(config.db, { readonly: true });
  try {
    const runId = o.run!;
    let folder;
    try {
      folder = writeRunCsv(db, runId, resolve(ctx.cwd, o.out!));
    } catch (e) {
      if (!(e instanceof OutputError)) throw e;
      ctx.stderr.write(`benefits-sync export: ${e.message}\n`);
      return ExitCode.RUN_FAILED;
    }
    // Exporting into a directory that `sync --out` delivers to: say where the run already went.
    const { deliveryOf } = await import("../../sinks/ledger.js");
    const { csvOutput } = await import("../../sinks/csv/deliver-csv.js");
    const earlier = deliveryOf(db, csvOutput(resolve(ctx.cwd, o.out!)), runId);
    if (earlier && (earlier.forRun !== runId || earlier.runs.length !== 1)) {
      ctx.stderr.write(
        `Note: this directory receives sync --out deliveries, and run ${runId}'s changes already went to it in ${join(resolve(ctx.cwd, o.out!), String(earlier.forRun))} ` +
          `(delivery ${earlier.deliveryId}, runs ${earlier.runs.join(", ")}): a loader that reads every folder gets them twice.\n`,
      );
    }
    if (ctx.globals.json) {
      ctx.stdout.write(`${JSON.stringify({ runId, format, dir: folder.dir, runs: folder.runs, files: folder.files })}\n`);
    } else if (!ctx.globals.quiet) {
      ctx.stdout.write(`Run ${runId} deltas: ${folder.dir} (${describeFiles(folder.files)}; manifest.json)\n`);
    }
    return ExitCode.OK;
  } finally {
    db.close();
  }
}

function describeFiles(files: readonly { file: string; rows: number }[]): string {
  const changed = files.filter((f) => f.rows > 0);
  return changed.length ? changed.map((f) => `${f.file} ${f.rows} row${f.rows === 1 ? "" : "s"}`).join(", ") : "no changes";
}

/**
 * `benefits-sync export --state|--history [--run N] --out DIR|s3://BUCKET/PREFIX [--format csv|jsonl|parquet]`: every
 * view as of run N (default: the latest run that succeeded) as `DIR/state-<N, 8 digits>/`, or every
 * version up to run N as `DIR/history-<N, 8 digits>/` (src/sinks/state/). Read-only: the snapshot
 * is opened read-only and the delivery ledger is neither read nor changed. Exit 0 written, 1 the
 * folder could not be written, 2 bad usage (no such run, --sink, both at once).
 */
import { resolve } from "node:path";
import { redact } from "../../errors.js";
import { UsageError } from "../../input-errors.js";
import { openSnapshotToRead, requireSnapshot } from "../snapshot-to-read.js";
import type { CommandContext } from "../context.js";
import { ExitCode } from "../exit-codes.js";
import type { FileFormatName } from "../../sinks/files/folder-sink.js";

export interface StateOptions {
  readonly state?: boolean;
  readonly history?: boolean;
  readonly run?: number;
  readonly out?: string;
  readonly format?: FileFormatName;
  readonly sink?: string;
  readonly fromRun?: number;
  readonly layout?: string;
}

/** The usage problems of a state or history export (none: an empty list). */
export function stateProblems(o: StateOptions): string[] {
  const problems: string[] = [];
  if (o.state && o.history) problems.push("--state and --history: give one (the rows as of a run, or every version up to it); run export twice for both");
  const which = o.state ? "--state" : "--history";
  if (o.sink !== undefined) problems.push(`--sink: ${which} writes files under a folder (--out), not into a warehouse; drop --sink`);
  if (o.fromRun !== undefined) problems.push(`--from-run: ${which} writes one folder as of --run; drop --from-run`);
  if (o.layout !== undefined) problems.push(`--layout: ${which} writes one folder of files, one a view (${o.state ? "state" : "history"}-<run>/); drop --layout`);
  if (o.out === undefined || o.out === "") problems.push(`--out: the directory to write ${o.state ? "DIR/state-<run>/" : "DIR/history-<run>/"} under is required`);
  return problems;
}

export async function runStateExport(ctx: CommandContext, o: StateOptions): Promise<number> {
  const problems = stateProblems(o);
  if (problems.length) throw new UsageError(problems);
  const kind = o.state ? "state" : "history";
  const format = o.format ?? "csv";
  const config = ctx.config();
  requireSnapshot(config.db);
  const { exportState, latestSucceededRun } = await import("../../sinks/state/state-export.js");
  const { OutputError, isOutputRefusal } = await import("../../sinks/output-error.js");
  const db = openSnapshotToRead(config.db);
  try {
    const runId = o.run ?? latestSucceededRun(db);
    let folder;
    try {
      if (/^s3:\/\//i.test(o.out!)) folder = await (await import("../../sinks/state/state-s3.js")).exportStateToS3(db, kind, runId, o.out!, format);
      else folder = await exportState(db, kind, runId, resolve(ctx.cwd, o.out!), format);
    } catch (e) {
      const code = (e as { code?: string }).code;
      if (code?.startsWith("S3")) {
        ctx.stderr.write(`benefits-sync export: ${redact((e as Error).message)} [${code}]\n`);
        return isOutputRefusal(code) ? ExitCode.USAGE : ExitCode.RUN_FAILED;
      }
      if (!(e instanceof OutputError)) throw e;
      ctx.stderr.write(`benefits-sync export: ${e.message}\n`);
      return ExitCode.RUN_FAILED;
    }
    if (ctx.globals.json) {
      ctx.stdout.write(`${JSON.stringify({ kind, runId, format, dir: folder.dir, files: folder.files })}\n`);
    } else if (!ctx.globals.quiet) {
      const rows = folder.files.map((f) => `${f.file} ${f.rows} row${f.rows === 1 ? "" : "s"}`).join(", ");
      ctx.stdout.write(`Run ${runId} ${kind === "state" ? "state" : "history"}: ${folder.dir} (${rows}; manifest.json)\n`);
    }
    return ExitCode.OK;
  } finally {
    db.close();
  }
}

/**
 * `benefits-sync export --run N --out DIR [--format csv|jsonl|parquet]`: (re)write one run's
 * deltas under DIR/<N, 8 digits>/, the same bytes each time. A re-export: the delivery ledger is neither read
 * nor changed, and the snapshot is opened read-only. Exit 0 written, 1 the folder could not be
 * written, 2 bad usage (no such run).
 *
 * `export --run N --sink URL|NAME`: load into a Postgres warehouse every finished run up to N that
 * it lacks (by its own load ledger), in order, through the delivery ledger; a run it has is never
 * applied twice. Exit 0 loaded (or nothing to load), 1 the load failed (the warehouse is as it was).
 */
import { join, resolve } from "node:path";
import { redact } from "../../errors.js";
import { UsageError } from "../../input-errors.js";
import { openSnapshotToRead, requireSnapshot } from "../snapshot-to-read.js";
import type { CommandContext } from "../context.js";
import { ExitCode } from "../exit-codes.js";
import type { FileFormatName } from "../../sinks/files/folder-sink.js";
import type { LayoutName } from "../../sinks/files/table-layout.js";

export async function run(ctx: CommandContext): Promise<number> {
  const o = ctx.options as { run?: number; out?: string; format?: FileFormatName; layout?: "folder" | "tables"; sink?: string; fromRun?: number; state?: boolean; history?: boolean };
  // --state / --history: the views as of a run, or every version (export-state.ts).
  if (o.state || o.history) return (await import("./export-state.js")).runStateExport(ctx, o);
  const problems: string[] = [];
  if (o.run === undefined) problems.push("--run: which run to export is required (`benefits-sync runs` lists them)");
  if (o.sink !== undefined && o.out !== undefined) problems.push("--out and --sink: give one (a folder of files, or a warehouse); run export twice for both");
  else if (o.sink === undefined && (o.out === undefined || o.out === "")) problems.push("--out: the directory to write DIR/<run_id>/ under is required (or --sink for a warehouse)");
  if (o.sink !== undefined && o.format !== undefined) problems.push("--format: it says which files --out writes; a warehouse (--sink) takes no format");
  if (o.sink !== undefined && o.layout !== undefined) problems.push("--layout: it says how --out lays out its files; a warehouse (--sink) takes none");
  if (o.fromRun !== undefined && o.run !== undefined && o.fromRun > o.run) problems.push(`--from-run ${o.fromRun}: it is after --run ${o.run}; give a run at or before it`);
  if (problems.length) throw new UsageError(problems);
  const config = ctx.config();
  // A warehouse's ledger is in the snapshot (that export writes it, converting an old file); a folder's is not (it only reads).
  requireSnapshot(config.db);
  if (o.sink !== undefined) return toWarehouse(ctx, config.db, o.run!, o.sink, config.sinks, o.fromRun);
  const layout = o.layout ?? "folder";
  const { exportFolder, checkTablesFormat } = await import("../../sinks/files/formats.js");
  // --layout tables alone means Parquet; with another --format it is refused.
  if (layout === "tables") checkTablesFormat((o.format ??= "parquet"));
  const format = o.format ?? "csv";
  if (/^s3:\/\//i.test(o.out!)) return toS3(ctx, config.db, o.run!, o.out!, format, o.fromRun, layout);
  const { tableManifest } = await import("../../sinks/files/table-layout.js");
  const manifestOf = (r: number): string => (layout === "tables" ? tableManifest(r) : "manifest.json");
  const { OutputError } = await import("../../sinks/output-error.js");
  const db = openSnapshotToRead(config.db);
  try {
    const runId = o.run!;
    // --from-run M: every finished run from M to N, each its own folder, as sync --out delivers them.
    const { checkExportable, finishedRuns } = await import("../../sinks/sink.js");
    if (o.fromRun !== undefined) checkExportable(db, o.fromRun);
    const runs = o.fromRun !== undefined ? finishedRuns(db, runId).filter((r) => r >= o.fromRun!) : [runId];
    let folder;
    try {
      for (const r of runs.slice(0, -1)) {
        const f = await exportFolder(db, r, resolve(ctx.cwd, o.out!), format, layout);
        if (!ctx.globals.json && !ctx.globals.quiet) ctx.stdout.write(`Run ${r} deltas: ${f.dir} (${describeFiles(f.files)}; ${manifestOf(r)})\n`);
      }
      folder = await exportFolder(db, runId, resolve(ctx.cwd, o.out!), format, layout);
    } catch (e) {
      if (!(e instanceof OutputError)) throw e;
      ctx.stderr.write(`benefits-sync export: ${e.message}\n`);
      return ExitCode.RUN_FAILED;
    }
    // Exporting into a directory that `sync --out` delivers to: say where the run already went.
    const { deliveryOf } = await import("../../sinks/ledger.js");
    const { folderOutput } = await import("../../sinks/files/folder-sink.js");
    const earlier = deliveryOf(db, folderOutput(format, resolve(ctx.cwd, o.out!), layout), runId);
    if (earlier && (earlier.forRun !== runId || earlier.runs.length !== 1)) {
      ctx.stderr.write(
        `Note: this directory receives sync --out deliveries, and run ${runId}'s changes already went to it in ${join(resolve(ctx.cwd, o.out!), String(earlier.forRun))} ` +
          `(delivery ${earlier.deliveryId}, runs ${earlier.runs.join(", ")}): a loader that reads every folder gets them twice.\n`,
      );
    }
    if (ctx.globals.json) {
      ctx.stdout.write(`${JSON.stringify({ runId, format, dir: folder.dir, runs: folder.runs, files: folder.files, ...(runs.length > 1 ? { exported: runs } : {}) })}\n`);
    } else if (!ctx.globals.quiet) {
      ctx.stdout.write(`Run ${runId} deltas: ${folder.dir} (${describeFiles(folder.files)}; ${manifestOf(runId)})\n`);
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

async function toWarehouse(
  ctx: CommandContext,
  dbPath: string,
  runId: number,
  sink: string,
  sinks: Parameters<typeof import("../../sinks/outputs.js").configuredOutputs>[0],
  fromRun: number | undefined,
): Promise<number> {
  const { configuredOutputs, sinkSpec, sinkFor } = await import("../../sinks/outputs.js");
  const spec = sinkSpec(sink, configuredOutputs(sinks, ctx.env, ctx.cwd));
  const { openDatabase } = await import("../../store/file/database.js");
  const { checkExportable, deliverToSink, writeDelivery } = await import("../../sinks/sink.js");
  const db = openDatabase(dbPath);
  try {
    checkExportable(db, runId);
    const target = await sinkFor(spec);
    let outcome = await deliverToSink(db, target, runId, undefined, fromRun ?? spec.fromRun);
    if (outcome.status === "nothing") {
      // The ledger says every run went there; the warehouse's own ledger decides (a warehouse
      // restored from an old backup lacks some): it loads whatever it lacks, or nothing.
      try {
        outcome = { status: "delivered", runs: [], value: await writeDelivery(db, target, { folderRun: runId, runs: [] }) };
      } catch (e) {
        outcome = { status: "failed", runs: [], error: { code: (e as { code?: string }).code ?? "DELIVERY", message: redact(e instanceof Error ? e.message : String(e)) } };
      }
    }
    const loaded = (outcome.value as { loadedRuns?: number[] } | undefined)?.loadedRuns ?? [];
    if (ctx.globals.json) {
      ctx.stdout.write(`${JSON.stringify({ runId, output: target.describe, status: outcome.status, runs: outcome.runs, loadedRuns: loaded, ...(outcome.error ? { error: outcome.error } : {}) })}\n`);
    }
    if (outcome.status === "failed") {
      ctx.stderr.write(`benefits-sync export: the load into ${target.describe} failed and changed nothing there: ${outcome.error?.message} [${outcome.error?.code}]\n`);
      const { isSnapshotRefusal } = await import("../../sinks/output-error.js");
      return isSnapshotRefusal(outcome.error?.code) ? ExitCode.USAGE : ExitCode.RUN_FAILED;
    }
    if (!ctx.globals.json && !ctx.globals.quiet) {
      ctx.stdout.write(
        loaded.length
          ? `Loaded into ${target.describe}: run${loaded.length === 1 ? "" : "s"} ${loaded.join(", ")}\n`
          : `Nothing to load: ${target.describe} already holds every run up to ${runId}\n`,
      );
    }
    return ExitCode.OK;
  } finally {
    db.close();
  }
}

/** `export --run N --out s3://bucket/prefix`: the folder export's run folders, published to S3 (manifest last); the ledger is not read or changed. */
async function toS3(ctx: CommandContext, dbPath: string, runId: number, url: string, format: FileFormatName, fromRun: number | undefined, layout: LayoutName): Promise<number> {
  const { outSpec, sinkFor } = await import("../../sinks/outputs.js");
  const { checkExportable, exportRun, finishedRuns } = await import("../../sinks/sink.js");
  const { isOutputRefusal } = await import("../../sinks/output-error.js");
  const sink = await sinkFor(outSpec(url, format, ctx.cwd, layout));
  const { tableManifest } = await import("../../sinks/files/table-layout.js");
  const db = openSnapshotToRead(dbPath);
  try {
    checkExportable(db, runId);
    if (fromRun !== undefined) checkExportable(db, fromRun);
    const runs = fromRun !== undefined ? finishedRuns(db, runId).filter((r) => r >= fromRun) : [runId];
    for (const r of runs) {
      let folder: { dir: string; runs: readonly number[]; files: readonly { file: string; rows: number }[] };
      try {
        folder = (await exportRun(db, sink, r)) as typeof folder;
      } catch (e) {
        const code = (e as { code?: string }).code;
        if (!code?.startsWith("S3")) throw e;
        ctx.stderr.write(`benefits-sync export: run ${r} not written to ${sink.describe}: ${redact((e as Error).message)} [${code}]\n`);
        return isOutputRefusal(code) ? ExitCode.USAGE : ExitCode.RUN_FAILED;
      }
      if (ctx.globals.json && r === runId) ctx.stdout.write(`${JSON.stringify({ runId, format, dir: folder.dir, runs: folder.runs, files: folder.files, ...(runs.length > 1 ? { exported: runs } : {}) })}\n`);
      else if (!ctx.globals.json && !ctx.globals.quiet) ctx.stdout.write(`Run ${r} deltas: ${folder.dir} (${describeFiles(folder.files)}; ${layout === "tables" ? tableManifest(r) : "manifest.json"})\n`);
    }
    return ExitCode.OK;
  } finally {
    db.close();
  }
}

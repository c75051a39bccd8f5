/**
 * `benefits-sync sync`: one run (walk, diff, record). Exit 0 when the run succeeded, 1 when it
 * failed (it is recorded as failed and deleted nothing), 2 for bad usage or configuration. After a
 * successful run, the deltas go to each output: `--out DIR [--format F]` (every change DIR has not
 * received, as DIR/<run_id>/), `--sink URL|NAME` (a Postgres warehouse), and every sink named in
 * the config file. A failed delivery exits 1 (the run stays succeeded, and the next run retries it).
 * SIGINT and SIGTERM stop the run (recorded as interrupted) and exit 130 and 143.
 */
import { existsSync } from "node:fs";
import { UsageError } from "../../input-errors.js";
import type { PiiMode } from "../../store/pii/pii.js";
import { WalkedResources, type WalkedResource } from "../../store/schema/resources.js";
import type { CommandContext } from "../context.js";
import { ExitCode } from "../exit-codes.js";
import { notifyRunEnd } from "../run-notify.js";
import { printRunReport, runExitCode, runNotices } from "../run-report.js";
import { watchSignals } from "../signals.js";
import { progressReporter } from "../progress.js";

export async function run(ctx: CommandContext): Promise<number> {
  const o = ctx.options as {
    resources?: string[];
    claimsSince?: string;
    claimsUntil?: string;
    out?: string;
    format?: "csv" | "jsonl" | "parquet";
    layout?: "folder" | "tables";
    sink?: string;
    fromRun?: number;
    dryRun?: boolean;
    allowDeletes?: boolean;
    pii?: string;
  };
  const config = ctx.config(o.pii !== undefined ? { pii: o.pii } : {});
  const resources = parseResources(o.resources);
  if (o.claimsSince && o.claimsUntil && o.claimsSince > o.claimsUntil) {
    throw new UsageError([`--claims-since ${o.claimsSince} is after --claims-until ${o.claimsUntil}`]);
  }
  if (o.format !== undefined && o.out === undefined) throw new UsageError(["--format: it says which files --out writes; give --out DIR as well"]);
  if (o.layout !== undefined && o.out === undefined) throw new UsageError(["--layout: it says how --out lays out its files; give --out DIR as well"]);
  const layout = o.layout ?? "folder";
  // The table layout is Parquet's: --layout tables alone means Parquet, with another --format it is refused.
  if (layout === "tables") (await import("../../sinks/files/formats.js")).checkTablesFormat((o.format ??= "parquet"));
  const { configuredOutputs, sinkSpec, outSpec, outputId } = await import("../../sinks/outputs.js");
  // A folder (relative to the working directory the command was given) or an s3:// prefix.
  const out = o.out !== undefined ? outSpec(o.out, o.format ?? "csv", ctx.cwd, layout) : undefined;
  const outWhere = out ? (out.kind === "folder" ? out.dir : out.kind === "s3" ? out.url : "") : undefined;
  const named = configuredOutputs(config.sinks, ctx.env, ctx.cwd);
  const picked = o.sink !== undefined ? sinkSpec(o.sink, named) : undefined;
  const start = o.fromRun !== undefined ? { fromRun: o.fromRun } : {};
  const outputs = [...(picked ? [{ ...picked, ...start }] : []), ...Object.values(named).filter((n) => n !== picked)];
  if (o.fromRun !== undefined) {
    await checkFromRunBefore(config.db, o.fromRun, out ? { output: outputId(out), where: outWhere! } : undefined, o.out !== undefined || o.sink !== undefined);
  }
  // A folder or an S3 prefix of another snapshot's runs: refused before the run, which then records nothing.
  const folders = [...(out?.kind === "folder" ? [out.dir] : []), ...outputs.flatMap((s) => (s.kind === "folder" ? [s.dir] : []))];
  if (!o.dryRun) await (await import("../../sinks/files/folder-owner.js")).checkFoldersBefore(config.db, folders);
  const prefixes = [...(out?.kind === "s3" ? [out] : []), ...outputs.flatMap((s) => (s.kind === "s3" ? [s] : []))];
  if (!o.dryRun) await (await import("../../sinks/s3/s3-claim.js")).checkS3Before(config.db, prefixes);
  const { runSyncJob } = await import("../../pipeline/run-sync-job.js");
  const progress = ctx.globals.quiet ? undefined : progressReporter(ctx.stderr);
  const signals = watchSignals();
  const notices = runNotices(ctx);
  try {
    const report = await runSyncJob({
      config,
      ...(resources ? { resources } : {}),
      ...(o.claimsSince ? { claimsSince: o.claimsSince } : {}),
      ...(o.claimsUntil ? { claimsUntil: o.claimsUntil } : {}),
      dryRun: o.dryRun ?? false,
      // Relative to the working directory the command was given, which names the output.
      ...(outWhere !== undefined ? { outDir: outWhere, outFormat: o.format ?? "csv", outLayout: layout, ...(o.fromRun !== undefined ? { outFromRun: o.fromRun } : {}) } : {}),
      ...(outputs.length ? { outputs } : {}),
      allowDeletes: o.allowDeletes ?? false,
      pii: config.pii as PiiMode,
      ...(progress ? { onProgress: (p) => progress.update(p) } : {}),
      onNotice: notices.notice,
      signal: signals.signal,
    });
    progress?.finish();
    (await import("../../jobs/run-outcome.js")).recordRunEnd("sync", report);
    notices.settle(report);
    printRunReport(ctx, report);
    await notifyRunEnd(ctx, config, "sync", report);
    return signals.exitCode(runExitCode(report));
  } finally {
    signals.dispose();
  }
}

/** `--from-run N` names a run of this snapshot (or the one this sync records), for an output given here. */
async function checkFromRunBefore(dbPath: string, fromRun: number, out: { output: string; where: string } | undefined, hasOutput: boolean): Promise<void> {
  if (!hasOutput) throw new UsageError(["--from-run: it says where a new output starts; give --out DIR (or --sink) as well"]);
  const { checkFromRun } = await import("../../sinks/output-start.js");
  if (dbPath === ":memory:" || !existsSync(dbPath)) return checkFromRun(undefined, fromRun);
  const { openDatabase } = await import("../../store/file/database.js");
  const db = openDatabase(dbPath, { readonly: true });
  try {
    checkFromRun(db, fromRun);
    if (out) (await import("../../sinks/output-start.js")).needsStart(db, out.output, fromRun, out.where);
  } finally {
    db.close();
  }
}

function parseResources(list: string[] | undefined): WalkedResource[] | undefined {
  if (!list) return undefined;
  const bad = list.filter((r) => !(WalkedResources as readonly string[]).includes(r));
  if (bad.length) {
    throw new UsageError([`--resources: unknown ${bad.map((b) => JSON.stringify(b)).join(", ")}; expected some of ${WalkedResources.join(", ")}`]);
  }
  return list as WalkedResource[];
}

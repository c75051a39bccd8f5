/**
 * `benefits-sync sync`: one run (walk, diff, record). Exit 0 when the run succeeded, 1 when it
 * failed (it is recorded as failed and deleted nothing), 2 for bad usage or configuration. After a
 * successful run, the deltas go to each output: `--out DIR [--format F]` (every change DIR has not
 * received, as DIR/<run_id>/), `--sink URL|NAME` (a Postgres warehouse), and every sink named in
 * the config file. A failed delivery exits 1 (the run stays succeeded, and the next run retries it).
 * SIGINT and SIGTERM stop the run (recorded as interrupted) and exit 130 and 143.
 */
import { resolve } from "node:path";
import { ConfigError } from "../../errors.js";
import type { PiiMode } from "../../store/pii.js";
import { WalkedResources, type WalkedResource } from "../../store/resources.js";
import type { CommandContext } from "../context.js";
import { ExitCode } from "../exit-codes.js";
import { printRunReport, runExitCode } from "../run-report.js";
import { watchSignals } from "../signals.js";
import { progressReporter } from "../progress.js";

export async function run(ctx: CommandContext): Promise<number> {
  const o = ctx.options as {
    resources?: string[];
    claimsSince?: string;
    claimsUntil?: string;
    out?: string;
    format?: "csv" | "jsonl" | "parquet";
    sink?: string;
    dryRun?: boolean;
    allowDeletes?: boolean;
    pii?: string;
  };
  const config = ctx.config(o.pii !== undefined ? { pii: o.pii } : {});
  const resources = parseResources(o.resources);
  if (o.claimsSince && o.claimsUntil && o.claimsSince > o.claimsUntil) {
    throw new ConfigError([`--claims-since ${o.claimsSince} is after --claims-until ${o.claimsUntil}`]);
  }
  if (o.format !== undefined && o.out === undefined) throw new ConfigError(["--format: it says which files --out writes; give --out DIR as well"]);
  const { configuredOutputs, sinkSpec } = await import("../../sinks/outputs.js");
  const named = configuredOutputs(config.sinks, ctx.env, ctx.cwd);
  const outputs = [
    ...(o.sink !== undefined ? [sinkSpec(o.sink, named)] : []),
    ...Object.values(named).filter((n) => o.sink === undefined || sinkSpec(o.sink, named) !== n),
  ];
  const { runSyncJob } = await import("../../pipeline/run-sync-job.js");
  const progress = ctx.globals.quiet ? undefined : progressReporter(ctx.stderr);
  const signals = watchSignals();
  try {
    const report = await runSyncJob({
      config,
      ...(resources ? { resources } : {}),
      ...(o.claimsSince ? { claimsSince: o.claimsSince } : {}),
      ...(o.claimsUntil ? { claimsUntil: o.claimsUntil } : {}),
      dryRun: o.dryRun ?? false,
      // Relative to the working directory the command was given, which names the output.
      ...(o.out !== undefined ? { outDir: resolve(ctx.cwd, o.out), outFormat: o.format ?? "csv" } : {}),
      ...(outputs.length ? { outputs } : {}),
      allowDeletes: o.allowDeletes ?? false,
      pii: config.pii as PiiMode,
      ...(progress ? { onProgress: (p) => progress.update(p) } : {}),
      onNotice: (m) => ctx.stderr.write(`${m}\n`),
      signal: signals.signal,
    });
    progress?.finish();
    printRunReport(ctx, report);
    return signals.exitCode(runExitCode(report));
  } finally {
    signals.dispose();
  }
}

function parseResources(list: string[] | undefined): WalkedResource[] | undefined {
  if (!list) return undefined;
  const bad = list.filter((r) => !(WalkedResources as readonly string[]).includes(r));
  if (bad.length) {
    throw new ConfigError([`--resources: unknown ${bad.map((b) => JSON.stringify(b)).join(", ")}; expected some of ${WalkedResources.join(", ")}`]);
  }
  return list as WalkedResource[];
}

/**
 * `benefits-sync prune --keep-runs N | --before DATE [--dry-run]`: remove the history no kept run
 * needs (src/store/retention/prune.ts), or say what holds it back. Exit 0 pruned (or nothing to prune), 2
 * bad usage or held back (nothing removed), 75 the snapshot's write lock stayed taken (what was
 * removed before stays removed; run it again).
 */
import type { Config } from "../../config/schema.js";
import { SnapshotBusyError } from "../../errors.js";
import { UsageError } from "../../input-errors.js";
import type { KnownOutput, PruneBound, PrunePlan } from "../../store/retention/prune-plan.js";
import type { PruneProgress, PruneResult } from "../../store/retention/prune.js";
import type { CommandContext } from "../context.js";
import { ExitCode } from "../exit-codes.js";
import { requireSnapshot } from "../snapshot-to-read.js";

/** The configured outputs as the delivery ledger names them, and the enabled reconciliation jobs. */
export async function pruneHolders(config: Config, env: Readonly<Record<string, string | undefined>>, cwd: string): Promise<{ outputs: KnownOutput[]; reconcileJobs: string[] }> {
  const { configuredOutputs, outputId } = await import("../../sinks/outputs.js");
  const { parseWarehouseUrl } = await import("../../sinks/postgres/connection.js");
  const { effectiveJobs } = await import("../../jobs/registry.js");
  const outputs = Object.entries(configuredOutputs(config.sinks, env, cwd)).map(([name, spec]) => ({
    id: spec.kind === "postgres" ? parseWarehouseUrl(spec.url).output : outputId(spec),
    name: `the sink ${name} (sinks.${name})`,
    ...(spec.fromRun !== undefined ? { fromRun: spec.fromRun } : {}),
  }));
  const reconcileJobs = effectiveJobs(config)
    .filter((j) => j.enabled && j.kind === "reconcile")
    .map((j) => j.name);
  return { outputs, reconcileJobs };
}

export function pruneBound(o: { keepRuns?: number; before?: string }, flags = { keep: "--keep-runs", before: "--before" }): PruneBound {
  if ((o.keepRuns === undefined) === (o.before === undefined)) {
    throw new UsageError([`${flags.keep} N or ${flags.before} DATE: give exactly one (how many successful syncs to keep, or the date the kept history starts)`]);
  }
  return o.keepRuns !== undefined ? { keepRuns: o.keepRuns } : { before: o.before! };
}

export async function run(ctx: CommandContext): Promise<number> {
  const o = ctx.options as { keepRuns?: number; before?: string; dryRun?: boolean; vacuum?: boolean; forgetOutput?: string[] };
  const forget = o.forgetOutput ?? [];
  const bound = pruneBound(o);
  const config = ctx.config();
  requireSnapshot(config.db);
  const holders = await pruneHolders(config, ctx.env, ctx.cwd);
  const say = (s: string) => {
    if (!ctx.globals.json && !ctx.globals.quiet) ctx.stdout.write(`${s}\n`);
  };
  if (o.dryRun) {
    const { openSnapshotToRead } = await import("../snapshot-to-read.js");
    const { planPrune } = await import("../../store/retention/prune-plan.js");
    const db = openSnapshotToRead(config.db);
    try {
      const plan = planPrune(db, bound, { ...holders, count: true, forget });
      for (const id of forget) say(`Would forget the output ${id}: its receipts go; delivered again, it starts at a kept run (--from-run).`);
      if (plan.holds.length > 0) return held(ctx, plan);
      if (ctx.globals.json) ctx.stdout.write(`${JSON.stringify({ status: "dry-run", ...planJson(plan) })}\n`);
      describePlan(plan, say, true);
      return ExitCode.OK;
    } finally {
      db.close();
    }
  }
  const { openDatabase } = await import("../../store/file/database.js");
  const { prune, PruneHeldError, prunedBefore } = await import("../../store/retention/prune.js");
  const { asSnapshotBusy } = await import("../../store/file/snapshot-busy.js");
  const { asDiskFull } = await import("../../store/file/disk-full.js");
  const progress = progressLine(ctx);
  let result: PruneResult;
  try {
    const db = openDatabase(config.db);
    try {
      result = prune(db, bound, { ...holders, onProgress: progress.step, vacuum: o.vacuum ? "full" : "incremental", forget });
      for (const id of forget) say(`Forgot the output ${id}: delivered again, it starts at a kept run (--from-run).`);
    } finally {
      progress.end();
      db.close();
    }
  } catch (e) {
    if (e instanceof PruneHeldError) return held(ctx, e.plan);
    const busy = asSnapshotBusy(config.db, e);
    if (busy instanceof SnapshotBusyError) {
      ctx.stderr.write(`benefits-sync prune: ${busy.message.replace(/; nothing was changed\./, "; what this prune had removed before it stays removed.")} Run the prune again: it goes on from there.\n`);
      return ExitCode.BUSY;
    }
    // A full disk (SQLite may call it "disk I/O error"): said as sync says it, with what was removed before.
    throw asDiskFull(busy, config.db, againAfter(prunedBefore(e)));
  }
  const removed = Object.values(result.versionsRemoved).reduce((a, b) => a + b, 0);
  if (ctx.globals.json) {
    ctx.stdout.write(
      `${JSON.stringify({ status: result.runsRemoved + removed > 0 ? "pruned" : "nothing", ...planJson(result.plan), versions: result.versionsRemoved, bytesBefore: result.bytesBefore, bytesAfter: result.bytesAfter, bytesReclaimed: Math.max(0, result.bytesBefore - result.bytesAfter), bytesFree: result.bytesFree, vacuumed: result.vacuumed, walEmptied: result.walEmptied })}\n`,
    );
  }
  describePlan({ ...result.plan, versions: result.versionsRemoved }, say, false);
  say(`  The file: ${mb(result.bytesBefore)} -> ${mb(result.bytesAfter)} (${mb(Math.max(0, result.bytesBefore - result.bytesAfter))} given back to the disk${result.vacuumed === "full" ? ", the file rewritten" : ""}).`);
  if (result.vacuumNote) ctx.stderr.write(`benefits-sync prune: ${result.vacuumNote}\n`);
  if (!result.walEmptied) ctx.stderr.write(`benefits-sync prune: ${WAL_HELD}\n`);
  else if (result.vacuumed === "incremental" && removed > 0) {
    say("  Room the removed versions left inside pages that still hold kept rows stays in the file; `prune --vacuum` (on a quiet snapshot) gives it back too.");
  }
  if (result.bytesFree > 0) say(`  ${mb(result.bytesFree)} stay free inside the file (made before incremental vacuum): later runs reuse them; \`VACUUM\` on a quiet snapshot gives them back.`);
  return ExitCode.OK;
}

/** What a prune says when a reader kept the WAL from being emptied (erasure.ts). */
export const WAL_HELD = "another connection held the snapshot's WAL (-wal file), which may still hold copies of what was removed until the next checkpoint: every run's end, or the next prune";

/** What to do once there is space again, and what the prune that stopped had removed (its steps commit one by one). */
function againAfter(so: PruneProgress | undefined): string {
  const r = so?.runs ?? [];
  if (r.length === 0 && (so?.versions ?? 0) === 0) return "run the prune again: this one removed nothing";
  const runs = r.length > 0 ? `runs ${r[0]} to ${r[r.length - 1]} were removed (the history starts at run ${so!.keepFrom})` : "no run was removed";
  return `run the prune again: it goes on from where it stopped. Before it stopped, ${runs} and ${n(so!.versions)} closed versions; they stay removed`;
}

const mb = (b: number): string => `${(b / 1e6).toFixed(1)} MB`;
const n = (x: number): string => x.toLocaleString("en-US");

function planJson(plan: PrunePlan) {
  const r = plan.runs;
  return {
    bound: plan.boundText,
    keepFrom: plan.keepFrom ?? null,
    runs: { count: r.length, first: r[0] ?? null, last: r[r.length - 1] ?? null },
    versions: plan.versions,
    moved: plan.moved,
  };
}

function describePlan(plan: PrunePlan, say: (s: string) => void, dry: boolean): void {
  const r = plan.runs;
  const versions = Object.entries(plan.versions).filter(([, v]) => v > 0);
  const total = versions.reduce((a, [, v]) => a + v, 0);
  if (r.length === 0 && total === 0) {
    say(`Nothing to prune (${plan.boundText}): ${plan.keepFrom === undefined ? "the bound keeps every run" : `the history already starts at run ${plan.keepFrom}`}.`);
  } else {
    const verb = dry ? "Would remove" : "Removed";
    say(`${verb} ${r.length ? `runs ${r[0]} to ${r[r.length - 1]} (${n(r.length)} runs)` : "no run"} and ${n(total)} closed versions (${plan.boundText}); the history ${dry ? "would start" : "starts"} at run ${plan.keepFrom}.`);
    if (versions.length) say(`  Closed versions: ${versions.map(([k, v]) => `${k} ${n(v)}`).join(", ")}. Current versions are never removed.`);
  }
  for (const m of plan.moved) say(`  ${m}.`);
  if (dry) say("  Nothing was changed (--dry-run).");
}

function held(ctx: CommandContext, plan: PrunePlan): number {
  if (ctx.globals.json) ctx.stdout.write(`${JSON.stringify({ status: "held", ...planJson(plan), holds: plan.holds })}\n`);
  ctx.stderr.write(`benefits-sync prune: ${plan.boundText} would remove runs ${plan.runs[0]} to ${plan.runs[plan.runs.length - 1]}, which still ${plan.holds.length === 1 ? "has a use" : "have uses"}. Nothing was removed.\n`);
  for (const h of plan.holds) ctx.stderr.write(`  - ${h.why}\n`);
  return ExitCode.USAGE;
}

/** On a terminal, one line redrawn; in a log, a JSON line at most every 10 s. */
function progressLine(ctx: CommandContext): { step: (step: string, done: number, total: number) => void; end: () => void } {
  if (ctx.globals.quiet) return { step: () => {}, end: () => {} };
  const tty = (ctx.stderr as { isTTY?: boolean }).isTTY === true;
  let last = 0;
  let drawn = false;
  return {
    step: (step, done, total) => {
      const now = Date.now();
      if (now - last < (tty ? 200 : 10_000)) return;
      last = now;
      if (tty) {
        drawn = true;
        ctx.stderr.write(`\r\x1b[2Kprune: ${step}: ${n(done)} of ${n(total)}`);
      } else ctx.stderr.write(`${JSON.stringify({ event: "progress", step, done, total })}\n`);
    },
    end: () => {
      if (drawn) ctx.stderr.write("\r\x1b[2K");
    },
  };
}

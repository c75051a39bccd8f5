/**
 * One schedule per seed: fast-check builds it from the seed (numRuns 1), so a seed alone names a
 * schedule and replays it exactly; with shrinking on, the smaller failing schedule it finds is
 * named by the seed and a path.
 */
import fc from "fast-check";
import { QUIET, scheduleArb, type RunSpec, type Schedule } from "./schedule.js";
import type { SimServer } from "./server.js";
import { runSchedule, type ScheduleOutcome } from "./simulation.js";

export interface SeedResult {
  readonly seed: number;
  readonly failed: boolean;
  /** The failing schedule's fast-check path (shrunk, when shrinking was on). */
  readonly path?: string;
  readonly outcome?: ScheduleOutcome;
  readonly schedule?: Schedule;
  /** A failure of the harness itself (not a violation of an invariant). */
  readonly crash?: string;
  readonly ms: number;
  readonly without?: readonly FaultFamily[];
}

/** The same schedules with every fault taken out (no HTTP or store fault, crash, mid-walk change, server bug, sink down). */
export const quietArb = scheduleArb.map((s) => ({ ...s, quietDeliveries: true, days: s.days.map((d) => ({ ...d, cursorBug: false, runs: d.runs.map(() => QUIET) })) }));

export const FaultFamilies = ["http", "midwalk", "lock", "io", "crash", "cursor", "sink", "webhooks", "outside"] as const;
export type FaultFamily = (typeof FaultFamilies)[number];

/** The same schedules without some families of fault: does a failure need them? */
export function withoutArb(families: readonly FaultFamily[]) {
  const no = new Set(families);
  const run = (r: RunSpec): RunSpec => ({
    ...r,
    level: no.has("http") ? 0 : r.level,
    midWalk: no.has("midwalk") ? [] : r.midWalk,
    store: { lock: no.has("lock") ? null : r.store.lock, io: no.has("io") ? null : r.store.io, crash: no.has("crash") ? null : r.store.crash },
    deliveryFails: no.has("sink") ? false : r.deliveryFails,
  });
  return scheduleArb.map((s) => ({
    ...s,
    ...(no.has("sink") ? { quietDeliveries: true } : {}),
    ...(no.has("webhooks") ? { webhooks: false } : {}),
    ...(no.has("outside") ? { outside: false } : {}),
    days: s.days.map((d) => ({ ...d, cursorBug: no.has("cursor") ? false : d.cursorBug, runs: d.runs.map(run) })),
  }));
}

export interface CheckOptions {
  readonly shrink?: boolean;
  readonly path?: string;
  /** The same schedule without its faults. */
  readonly quiet?: boolean;
  /** The same schedule without these families of fault. */
  readonly without?: readonly FaultFamily[];
  /** Count only these kinds of violation as a failure (to shrink towards one defect). */
  readonly only?: readonly string[];
  /** Count only violations whose message matches (with `only`, both must hold). */
  readonly match?: RegExp;
  /** The store on this thread, one group at a time (see Schedule.narrow). */
  readonly narrow?: boolean;
  /** Webhook events in every schedule (true) or none (false); unset: drawn per seed. */
  readonly webhooks?: boolean;
  /** Outside readers in every schedule (true) or none (false); unset: drawn per seed. */
  readonly outside?: boolean;
}

export async function checkSeed(seed: number, server: SimServer, opts: CheckOptions = {}): Promise<SeedResult> {
  const started = Date.now();
  let failing: { outcome: ScheduleOutcome; schedule: Schedule } | undefined;
  let last: ScheduleOutcome | undefined;
  const details = await fc.check(
    fc.asyncProperty(opts.quiet ? quietArb : opts.without?.length ? withoutArb(opts.without) : scheduleArb, async (drawn) => {
      const schedule = { ...drawn, ...(opts.narrow ? { narrow: true } : {}), ...(opts.webhooks !== undefined && drawn.webhooks === undefined ? { webhooks: opts.webhooks } : {}),
        ...(opts.outside !== undefined && drawn.outside === undefined ? { outside: opts.outside } : {}),
      };
      const outcome = await runSchedule(schedule, server);
      last = outcome;
      const counted = outcome.violations.filter((v) => (!opts.only || opts.only.includes(v.kind)) && (!opts.match || opts.match.test(v.message)));
      if (counted.length > 0) {
        failing = { outcome, schedule };
        return false;
      }
      return true;
    }),
    { seed, numRuns: 1, endOnFailure: !opts.shrink, ...(opts.path ? { path: opts.path } : {}) },
  );
  const ms = Date.now() - started;
  const w = opts.without?.length ? { without: opts.without } : {};
  if (!details.failed) return { seed, failed: false, ...(last ? { outcome: last } : {}), ms, ...w };
  if (!failing) {
    const e = details.errorInstance;
    return { seed, failed: true, path: details.counterexamplePath ?? "0", crash: e instanceof Error ? (e.stack ?? e.message) : String(e), ms, ...w };
  }
  return { seed, failed: true, path: details.counterexamplePath ?? "0", outcome: failing.outcome, schedule: failing.schedule, ms, ...w };
}

/** How to replay a seed, and what failed. */
export function describeFailure(r: SeedResult, opts: { trace?: boolean } = {}): string {
  const replay = `SIM_SEED=${r.seed} SIM_RUNS=1${r.path && r.path !== "0" ? ` SIM_PATH=${r.path}` : ""}${r.without ? ` SIM_WITHOUT=${r.without.join(",")}` : ""} npx vitest run test/sim/sim.test.ts`;
  const lines = [`seed ${r.seed}${r.path && r.path !== "0" ? ` path ${r.path}` : ""} - replay: ${replay}`];
  if (r.crash) lines.push(`  the harness failed: ${r.crash}`);
  for (const v of r.outcome?.violations ?? []) lines.push(`  [${v.kind}] ${v.message}`);
  if (opts.trace && r.outcome) {
    const s = r.schedule;
    if (s) {
      lines.push(
        `  schedule: ${s.days.length} day(s), ${s.init.members} members, ${s.init.groups} groups, ${s.init.claims} claims, ` +
          `encodeOnCaller=${s.encodeOnCaller}, commitEveryPages=${s.commitEveryPages}, hasMore=${s.hasMore}, ${r.outcome.shape}`,
      );
    }
    lines.push("  trace:", ...r.outcome.trace.map((t) => `    ${t}`));
  }
  return lines.join("\n");
}

/** The kinds of violation a result has, for counting. */
export function kindsOf(r: SeedResult): string[] {
  if (r.crash) return ["harness"];
  return [...new Set((r.outcome?.violations ?? []).map((v) => v.kind))];
}

/**
 * One schedule, end to end: the model served over HTTP, the real client and sync engine, a real
 * snapshot file with faults around it, deliveries through the ledger; then a quiet final sync and
 * a final delivery, and every invariant checked.
 *
 * The final sync: runs without faults until one succeeds that walked afresh (a resumed run does
 * not walk again the scopes its failed run completed, so changes made since in them wait for the
 * next walk). Each successful run delivers (the final ones with the sink up), so the final run's
 * delivery is the final delivery. A run the delete guard stops (the schedule may really delete many records) is run
 * again with --allow-deletes; the outcome counts how often.
 */
import { createClient } from "../../src/api/client.js";
import type { Logger } from "../../src/api/logger.js";
import { sync } from "../../src/pipeline/sync.js";
import { deliverTo, newDeliveryLog, NO_DELIVERY_FAULT, OutputKinds, type DeliveryFault, type OutputKind } from "./deliveries.js";
import {
  checkDeliveries,
  checkCounts,
  checkDoubleChanges,
  checkFalseDeletes,
  checkFinalState,
  checkGuard,
  checkRunLog,
  checkSsns,
  type RunRecord,
  type Violation,
} from "./invariants.js";
import { checkGuardStop } from "./guard-truth.js";
import { ServiceModel, WINDOW } from "./model.js";
import { Rng } from "./rng.js";
import { QUIET, type RunSpec, type Schedule } from "./schedule.js";
import type { SimServer } from "./server.js";
import { drawOutside, OutsideReaders } from "./outside.js";
import { drawPrune, runPrune } from "./prunes.js";
import { drawWebhooks, WebhookWorld } from "./webhooks.js";
import { join } from "node:path";
import { drawFirstCommands, firstCommandsTogether } from "./rekeys.js";
import { SIM_PII_KEY, World } from "./world.js";
import { EVENT_DEADLINE_MS } from "../helpers/wait.js";

/** The delete guard of every run (small, so that a day's mass deletes trip it). */
export const POLICY = { maxDeleteShare: 0.2, maxDeleteCount: 3 } as const;
/**
 * A run still going after this long is stuck (a cursor cycle the request budget did not stop).
 * A hang guard, not a speed bound: the same deadline as any awaited event in the tests, so a
 * schedule slowed by a loaded 2-core machine is never called hung (runaway requests are caught
 * separately, by count).
 */
const HANG_MS = EVENT_DEADLINE_MS;
const DAY_MS = 86_400_000;

/** Anything shaped like an SSN, out of text this harness prints. */
function scrub(text: string): string {
  return text.replace(/\d{3}-\d{2}-\d{4}/g, "[ssn]").replace(/(?<![0-9a-f])\d{9}(?![0-9a-f])/gi, "[9 digits]");
}

export interface ScheduleOutcome {
  readonly violations: Violation[];
  readonly runs: RunRecord[];
  readonly stats: Record<string, number>;
  /** The model's operations and each run's outcome, ids only. */
  readonly trace: string[];
  /** Where the store ran and how many groups were walked at once (see {@link drawShape}). */
  readonly shape: string;
}

/**
 * Most schedules run the store on this thread, one group at a time, so that requests come in one
 * order on every replay. A fraction (from the seed's own stream, so the schedule is unchanged)
 * runs the store on its worker thread, as the CLI does, and/or walks 2-4 groups at once: their
 * request order is not replayable, and the invariants hold whatever the order.
 */
export function drawShape(s: Schedule): { worker: boolean; groupConcurrency: number } {
  const rng = Rng.derive(s.seed, 4);
  const wide = rng.chance(0.3);
  const worker = rng.chance(0.5);
  const many = rng.chance(0.7);
  const n = rng.between(2, 4);
  if (s.narrow || !wide) return { worker: false, groupConcurrency: 1 };
  return { worker, groupConcurrency: many || !worker ? n : 1 };
}

/** The delivery faults after run #index, from the run's own stream (a crash takes down one output's delivery, and the process). */
function drawDeliveryFaults(s: Schedule, index: number, spec: RunSpec, final: boolean): Record<OutputKind, DeliveryFault> {
  const rng = Rng.derive(s.seed, 3000 + index);
  const folderDown = rng.chance(0.2);
  const crash = rng.chance(0.15);
  const output = rng.pick(OutputKinds);
  const point = rng.pick(["before-write", "after-write"] as const);
  const at = output === "folder" ? rng.between(1, 2) : 1;
  if (final || s.quietDeliveries) return { warehouse: NO_DELIVERY_FAULT, folder: NO_DELIVERY_FAULT };
  const crashOf = (o: OutputKind) => (crash && output === o ? { at, point } : null);
  return { warehouse: { down: spec.deliveryFails, crash: crashOf("warehouse") }, folder: { down: folderDown, crash: crashOf("folder") } };
}

export async function runSchedule(s: Schedule, server: SimServer): Promise<ScheduleOutcome> {
  const model = new ServiceModel(Rng.derive(s.seed, 1), s.init, Rng.derive(s.seed, 3));
  server.attach(model, s.hasMore);
  const world = new World({ commitEveryPages: s.commitEveryPages, encodeOnCaller: s.encodeOnCaller, onCrash: () => server.stopRecordingServed() });
  const texts: { where: string; text: string }[] = [];
  const log = (level: string) => (msg: string, fields?: Record<string, unknown>) => texts.push({ where: `client log (${level})`, text: `${msg} ${JSON.stringify(fields ?? {})}` });
  const logger: Logger = { debug: log("debug"), info: log("info"), warn: log("warn") };
  const jitter = Rng.derive(s.seed, 2);
  const client = createClient({
    baseUrl: server.baseUrl,
    apiKey: server.apiKey,
    retry: { maxAttempts: 4, baseMs: 0, capMs: 0, retryAfterCapMs: 0 },
    deadlines: { headersMs: 10_000, bodyMs: 10_000 },
    random: () => jitter.next(),
    logger,
  });
  const shape = drawShape(s);
  const outputs = OutputKinds.map((k) => newDeliveryLog(k));
  const runs: RunRecord[] = [];
  const violations: Violation[] = [];
  const trace: string[] = [];
  const stats: Record<string, number> = {};
  const bump = (k: string, n = 1) => (stats[k] = (stats[k] ?? 0) + n);
  let lastErrorCode: string | undefined;
  // Some schedules also have the service send webhook events, which a worker applies (webhooks.ts).
  const wh = (s.webhooks ?? drawWebhooks(s.seed))
    ? await WebhookWorld.start({ seed: s.seed, world, server, model, client, encodeOnCaller: s.encodeOnCaller, policy: POLICY, trace, stats })
    : undefined;
  const whLevel = (): 0 | 1 | 2 => wh!.between(0, 2) as 0 | 1 | 2;
  // Some schedules start two commands together on a new snapshot beside theirs (rekeys.ts).
  if (drawFirstCommands(s.seed)) violations.push(...(await firstCommandsTogether(s.seed, join(world.dir, "first-commands.db"), stats, trace)));
  // Some schedules also have another program reading the snapshot and the inbox (outside.ts).
  const outside = drawOutside(s.seed, s.outside) ? new OutsideReaders(s.seed, world.path, wh !== undefined, trace, stats) : undefined;
  let snapshotMade = false;
  const visit = (where: string) => outside?.visit(where, snapshotMade);

  const doRun = async (spec: RunSpec, cursorBug: boolean, opts: { final: boolean; allowDeletes: boolean }): Promise<RunRecord> => {
    const index = runs.length;
    const startTick = model.tick;
    server.beginRun({ level: spec.level, midWalk: spec.midWalk, cursorBug }, Rng.derive(s.seed, 1000 + index));
    // Webhook events sent, and the worker trying to drain them, while this run holds the snapshot.
    const atPage = wh && !opts.final && wh.chance(0.5) ? wh.between(1, 6) : 0;
    // Another program reading the files while this run holds the snapshot.
    const outsideAt = outside && !opts.final ? (index % 3) + 1 : 0;
    const onPage = async (n: number) => {
      if (n === outsideAt) await visit(`during run #${index}, page ${n}`);
      if (n !== atPage) return;
      await wh!.send(`during run #${index}, page ${n}`);
      await wh!.drain(`during run #${index}, page ${n}`, { duringWalk: true, level: 0 });
      if (outside) await visit(`during run #${index}, after the drain at page ${n}`);
    };
    // A store on its worker thread keeps wall time: no crash there (see World.beginRun).
    const port = await world.beginRun(shape.worker ? { ...spec.store, crash: null } : spec.store, shape.worker, atPage || outsideAt ? onPage : undefined);
    const hang = new AbortController();
    const timer = setTimeout(() => hang.abort(Object.assign(new Error(`the run did not finish in ${HANG_MS} ms`), { code: "SIM_HUNG" })), HANG_MS);
    let report: Awaited<ReturnType<typeof sync>> | undefined;
    let threw: unknown;
    try {
      report = await sync({
        source: client,
        store: port,
        claimsWindow: WINDOW,
        groupConcurrency: shape.groupConcurrency,
        deletePolicy: { ...POLICY, allowDeletes: opts.allowDeletes },
        signal: hang.signal,
      });
    } catch (e) {
      threw = e;
    } finally {
      clearTimeout(timer);
    }
    const served = server.endRun();
    const stored = await world.endRun();
    world.clock.advance(60_000);
    wh?.syncStarted();
    snapshotMade = true;
    const rawError = report?.error ? `${report.error.code}: ${report.error.message}` : threw instanceof Error ? `THREW ${threw.message}` : threw !== undefined ? `THREW ${String(threw)}` : undefined;
    // The SSN check reads the error as the sync gave it; the trace and messages get it scrubbed.
    if (rawError) texts.push({ where: `run ${report?.runId ?? "?"} report`, text: rawError });
    const error = rawError === undefined ? undefined : scrub(rawError);
    const rec: RunRecord = {
      index,
      runId: typeof report?.runId === "number" && report.runId > 0 ? report.runId : null,
      status: report?.status ?? "threw",
      ...(error ? { error } : {}),
      ...(report?.resumedFrom !== undefined ? { resumedFrom: report.resumedFrom } : {}),
      startTick,
      endTick: model.tick,
      allowDeletes: opts.allowDeletes,
      crashed: stored.crashed,
      final: opts.final,
      served: served.served,
    };
    runs.push(rec);
    lastErrorCode = report?.error?.code;
    bump(`runs ${rec.status}`);
    if (rec.resumedFrom !== undefined) bump("runs resumed");
    if (stored.crashed) bump("crashes");
    if (stored.ioErrors) bump("io errors");
    if (stored.lockHeld) bump("runs with a held write lock");
    if (lastErrorCode === "DELETE_GUARD") bump(opts.final ? "delete guard (final)" : "delete guard");
    // Judged now: the snapshot the stop put back is what the run would have deleted from.
    if (lastErrorCode === "DELETE_GUARD") violations.push(...checkGuardStop(world.db, model, runs, rec, POLICY));
    for (const [k, n] of Object.entries(served.faults)) bump(`http ${k}`, n);
    bump("mid-walk changes", served.midWalk.length);
    bump("requests", served.requests);
    trace.push(...served.midWalk.map((m) => `  (mid-walk) ${m}`));
    trace.push(...served.requestLog.map((l) => `      ${l}`));
    trace.push(
      `run #${index}${opts.final ? " (final)" : ""}: id ${rec.runId ?? "-"} ${rec.status}${rec.resumedFrom !== undefined ? ` resumed from ${rec.resumedFrom}` : ""}` +
        `${stored.crashed ? " CRASHED" : ""}${opts.allowDeletes ? " --allow-deletes" : ""}, ${served.requests} requests, ${stored.pages} pages` +
        `${error ? ` - ${error.slice(0, 160).replace(/\s+/g, " ")}` : ""}`,
    );
    if (threw !== undefined) violations.push({ kind: "sync-threw", message: `run #${index}: sync() threw instead of reporting: ${error}` });
    if (served.runaway) violations.push({ kind: "runaway", message: `run #${index} (id ${rec.runId}) asked for ${served.requests} pages, far more than the data holds: a cursor cycle` });
    if (hang.signal.aborted) violations.push({ kind: "hung", message: `run #${index} (id ${rec.runId}) did not finish in ${HANG_MS} ms` });
    if (rec.status === "succeeded" && !stored.crashed) violations.push(...checkCounts(world.db, `after run #${index} (id ${rec.runId})`));
    // Deltas go out after each successful run, to each output in turn, until the process dies.
    if (rec.status === "succeeded" && rec.runId !== null) {
      const faults = drawDeliveryFaults(s, index, spec, opts.final);
      for (const out of outputs) {
        if (await deliverTo(world.db, out, rec.runId, faults[out.kind], world.clock.now)) {
          trace.push(`  delivery to ${out.output} after run ${rec.runId}: the process died (${faults[out.kind].crash?.point})`);
          bump(`delivery crashes ${faults[out.kind].crash?.point}`);
          break;
        }
      }
    }
    // The changes that landed mid-walk are sent now; the worker may drain (the next run resumes past it).
    if (wh && !opts.final) {
      await wh.send(`after run #${index}`);
      if (wh.chance(0.6)) await wh.drain(`after run #${index}`, { duringWalk: false, level: whLevel() });
    }
    if (!opts.final) await visit(`after run #${index}`);
    // Sometimes a prune of the history (prunes.ts), on the connection the runs left idle.
    const pruneStep = opts.final ? undefined : drawPrune(s.seed, index, DAY_MS, world.clock.now());
    if (pruneStep) violations.push(...runPrune(world.db, pruneStep, outputs, world.clock.now(), trace, bump));
    return rec;
  };

  try {
    for (const [d, day] of s.days.entries()) {
      world.clock.advance(DAY_MS);
      trace.push(`day ${d}${day.cursorBug ? " (cursor bug on the server)" : ""}`);
      // With webhooks, the day's events go out in two batches, and the worker may drain after
      // each: a member refetched after the first is seen in a state the rest of the day may change.
      const cut = wh ? wh.between(0, day.ops.length) : day.ops.length;
      for (const op of day.ops.slice(0, cut)) trace.push(`  ${model.apply(op)}`);
      await visit(`day ${d}, after ${cut} operation(s)`);
      if (wh) {
        await wh.send(`day ${d}, after ${cut} operation(s)`);
        if (wh.chance(0.5)) await wh.drain(`day ${d}, after ${cut} operation(s)`, { duringWalk: false, level: whLevel() });
      }
      for (const op of day.ops.slice(cut)) trace.push(`  ${model.apply(op)}`);
      await visit(`day ${d}, after its operations`);
      if (wh && cut < day.ops.length) {
        await wh.send(`day ${d}, after its operations`);
        if (wh.chance(0.6)) await wh.drain(`day ${d}, after its operations`, { duringWalk: false, level: whLevel() });
      }
      for (const spec of day.runs) {
        const allow = spec.operatorAllowsDeletes && lastErrorCode === "DELETE_GUARD";
        await doRun(spec, day.cursorBug, { final: false, allowDeletes: allow });
      }
    }
    // The quiet final sync, after the worker drained what is due (whatever was lost, the walk repairs).
    world.clock.advance(DAY_MS);
    if (wh) {
      await wh.send("before the final sync");
      await wh.drain("before the final sync", { duringWalk: false, level: 0 });
    }
    let allow = false;
    let settled: RunRecord | undefined;
    for (let attempt = 0; attempt < 5 && !settled; attempt++) {
      const rec = await doRun(QUIET, false, { final: true, allowDeletes: allow });
      if (rec.status === "succeeded" && rec.resumedFrom === undefined) settled = rec;
      else if (rec.status === "succeeded") continue;
      else if (lastErrorCode === "DELETE_GUARD" && !allow) allow = true;
      else violations.push({ kind: "final-sync-failed", message: `the quiet final sync #${rec.index} ${rec.status}: ${rec.error ?? "(no error)"}` });
    }
    if (!settled) violations.push({ kind: "final-sync-failed", message: "no quiet final sync succeeded with a fresh walk in 5 attempts" });
    for (const out of outputs) {
      bump(`deliveries ${out.kind}`, out.attempts);
      bump(`deliveries ${out.kind} failed`, out.failures);
      bump(`deliveries ${out.kind} crashed`, out.crashes);
    }
    if (shape.worker) bump("schedules with the store on its worker thread");
    if (shape.groupConcurrency > 1) bump("schedules walking groups at once");
    if (wh) bump("schedules with webhook events");
    if (outside) bump("schedules with outside readers");

    const db = world.db;
    // Without a successful fresh final walk there is nothing to compare (final-sync-failed says why).
    if (settled) violations.push(...checkFinalState(db, model, SIM_PII_KEY, runs));
    violations.push(...checkFalseDeletes(db, model, runs));
    violations.push(...checkDoubleChanges(db));
    violations.push(...checkCounts(db, "at the end"));
    violations.push(...checkGuard(db, runs, POLICY));
    for (const out of outputs) violations.push(...checkDeliveries(db, out));
    violations.push(...checkRunLog(db, runs));
    if (wh) violations.push(...wh.violations);
    await outside?.finalCheck();
    if (outside) violations.push(...outside.violations);
    const dbTexts = [
      ...(db.prepare("SELECT run_id, error FROM runs WHERE error IS NOT NULL").all() as { run_id: number; error: string }[]).map((r) => ({ where: `runs.error of run ${r.run_id}`, text: r.error })),
      ...(db.prepare("SELECT run_id, reason, excerpt FROM quarantine").all() as { run_id: number; reason: string; excerpt: string }[]).map((r) => ({
        where: `quarantine of run ${r.run_id}`,
        text: `${r.reason} ${r.excerpt}`,
      })),
    ];
    violations.push(
      ...checkSsns(model.ssns, {
        files: [world.path, `${world.path}-wal`, ...(wh ? [wh.inboxPath, `${wh.inboxPath}-wal`] : [])],
        texts: [
          ...dbTexts,
          ...texts,
          ...outputs.flatMap((out) => [
            { where: `delivered deltas (${out.output})`, text: out.rows.map((r) => r.data ?? "").join("\n") },
            { where: `delivery errors (${out.output})`, text: out.outcomes.map((o) => o.error ?? "").join("\n") },
          ]),
        ],
      }),
    );
    return { violations, runs, stats, trace, shape: `store ${shape.worker ? "on its worker thread" : "in process"}, groupConcurrency=${shape.groupConcurrency}` };
  } finally {
    await wh?.close();
    await client.close();
    server.detach();
    world.close();
    // SIM_KEEP=1 keeps the snapshot file of each schedule for a look (its path is printed).
    if (process.env.SIM_KEEP === "1") process.stdout.write(`sim: kept ${world.path}\n`);
    else world.remove();
  }
}

/**
 * The conformance checks every sink of ours passes, for a sink of your own: plain async functions
 * that deliver from a real snapshot of their own (a temp SQLite file filled by real syncs) through
 * the delivery ledger, exactly as `sync --sink` does, read the output back with your `held`, and
 * throw a {@link SinkCheckError} that says what was seen when a promise does not hold. No test
 * runner is imported: call them from vitest, jest, mocha or node:test.
 *
 * @example
 * import { sinkChecks } from "benefits-sync/testing";
 * for (const check of sinkChecks) it(check.name, () => check.run(mySubject));
 */
import { deliverToSink, exportRun, snapshotId, writeDelivery, type DeliveryPlan, type Sink } from "../sinks/sink.js";
import { expectHeld, expectOutcome, faultySink, INJECTED, recordInterrupted, SinkCheckError, type SinkSubject } from "./check-tools.js";
import { kitSnapshot, type KitSnapshot } from "./kit-snapshot.js";

/** One named check, for a test runner's `it`/`test`. */
export interface SinkCheck {
  readonly name: string;
  run<R>(subject: SinkSubject<R>): Promise<void>;
}

/** A fresh snapshot and a fresh output for one check; both are removed afterwards. */
async function withSink<R>(subject: SinkSubject<R>, body: (sink: Sink<R>, snap: KitSnapshot) => Promise<void>): Promise<void> {
  const snap = kitSnapshot();
  try {
    const sink = await subject.create();
    try {
      await body(sink, snap);
    } finally {
      await subject.dispose?.(sink);
    }
  } finally {
    snap.close();
  }
}

const EACH_ONCE = "each run is delivered once";
/**
 * Runs delivered one by one and several at a time (a failed run's changes among them), a delivery
 * up to an earlier run, and a delivery with nothing left: each run lands once and whole, and no
 * run past the one asked for.
 */
export function checkEachRunDeliveredOnce<R>(subject: SinkSubject<R>): Promise<void> {
  return withSink(subject, async (sink, snap) => {
    const r1 = await snap.run();
    expectOutcome(EACH_ONCE, `delivering run ${r1}`, await deliverToSink(snap.db, sink, r1), "delivered");
    await expectHeld(EACH_ONCE, `after delivering run ${r1}`, subject, sink, snap, []);
    const r2 = await snap.run({ fails: true });
    const r3 = await snap.run();
    const r4 = await snap.run();
    const o = await deliverToSink(snap.db, sink, r3);
    expectOutcome(EACH_ONCE, `delivering up to run ${r3}`, o, "delivered");
    if (o.runs.join() !== `${r2},${r3}`) throw new SinkCheckError(EACH_ONCE, `delivering up to run ${r3} carried runs [${o.runs.join(", ")}], expected [${r2}, ${r3}]`);
    await expectHeld(EACH_ONCE, `after delivering runs ${r2} (failed, with changes) and ${r3}`, subject, sink, snap, [r4]);
    expectOutcome(EACH_ONCE, `delivering run ${r4}`, await deliverToSink(snap.db, sink, r4), "delivered");
    expectOutcome(EACH_ONCE, "delivering again with every run delivered", await deliverToSink(snap.db, sink, r4), "nothing");
    await expectHeld(EACH_ONCE, `after delivering run ${r4}, then nothing`, subject, sink, snap, []);
  });
}

const IDEMPOTENT = "a delivery sent again changes nothing";
/**
 * A delivery that reached the output but whose outcome was lost (its process died before the
 * ledger recorded it) is sent again, and a delivered run is written again as `export --run` does:
 * the output still holds each run once.
 */
export function checkRedeliveryIdempotent<R>(subject: SinkSubject<R>): Promise<void> {
  return withSink(subject, async (sink, snap) => {
    const r1 = await snap.run();
    const r2 = await snap.run();
    const plan: DeliveryPlan = { folderRun: r1, runs: [r1] };
    await sink.prepare?.(snapshotId(snap.db));
    await writeDelivery(snap.db, sink, plan);
    recordInterrupted(snap.db, sink.output, plan);
    // Told it did not arrive, the ledger sends run 1 again, with run 2.
    const again = await deliverToSink(snap.db, faultySink(sink, { arrived: false }), r2);
    expectOutcome(IDEMPOTENT, `delivering runs ${r1} (again, its outcome lost) and ${r2}`, again, "delivered");
    await expectHeld(IDEMPOTENT, `after run ${r1} was delivered twice`, subject, sink, snap, []);
    await exportRun(snap.db, sink, r1);
    await expectHeld(IDEMPOTENT, `after run ${r1} was written again (export --run ${r1})`, subject, sink, snap, []);
    expectOutcome(IDEMPOTENT, "delivering again with every run delivered", await deliverToSink(snap.db, sink, r2), "nothing");
  });
}

const FAILED_PENDING = "a failed delivery leaves its runs pending";
/**
 * A delivery that fails half written, then one that fails at its commit: the outcome is failed,
 * the failed runs stay pending in the ledger, the output holds nothing of them (the session's
 * `close` undid it), and the next delivery brings them, once.
 */
export function checkFailedDeliveryLeavesRunsPending<R>(subject: SinkSubject<R>): Promise<void> {
  return withSink(subject, async (sink, snap) => {
    const r1 = await snap.run();
    const r2 = await snap.run();
    for (const at of ["write", "commit"] as const) {
      const step = `a delivery up to run ${r2} failing ${at === "write" ? "half written" : "at its commit"}`;
      const o = await deliverToSink(snap.db, faultySink(sink, { at, when: (plan) => plan.runs.includes(r2) }), r2);
      expectOutcome(FAILED_PENDING, step, o, "failed");
      if (o.error?.code !== INJECTED) throw new SinkCheckError(FAILED_PENDING, `${step}: it failed, but not where planned (${o.error?.code}: ${o.error?.message})`);
      // A sink that takes each run on its own has run 1 delivered before run 2 failed; run 2 stays pending either way.
      const pending = alreadyDelivered(r1, snap, sink) ? [r2] : [r1, r2];
      await expectHeld(FAILED_PENDING, `after ${step}`, subject, sink, snap, pending);
    }
    expectOutcome(FAILED_PENDING, `delivering up to run ${r2} with nothing failing`, await deliverToSink(snap.db, sink, r2), "delivered");
    await expectHeld(FAILED_PENDING, "after the delivery that followed the failures", subject, sink, snap, []);
  });
}

/** Whether the ledger records run `r` delivered to the sink's output (by an earlier step). */
function alreadyDelivered<R>(r: number, snap: KitSnapshot, sink: Sink<R>): boolean {
  return snap.db.prepare("SELECT 1 FROM _delivered_runs WHERE output = ? AND run_id = ?").get(sink.output, r) !== undefined;
}

const SETTLED = "an interrupted delivery is settled by the next one";
/**
 * Two deliveries a dead process left pending: one that reached the output (the sink's `arrived`
 * may say so, or it is sent again), and one that died before its commit (`arrived` must say no,
 * or its runs would be recorded delivered and lost). After the next delivery each run is there once.
 */
export function checkInterruptedDeliverySettled<R>(subject: SinkSubject<R>): Promise<void> {
  return withSink(subject, async (sink, snap) => {
    const r1 = await snap.run();
    const landed: DeliveryPlan = { folderRun: r1, runs: [r1] };
    await sink.prepare?.(snapshotId(snap.db));
    await writeDelivery(snap.db, sink, landed);
    recordInterrupted(snap.db, sink.output, landed);
    const o1 = await deliverToSink(snap.db, sink, r1);
    if (o1.status === "failed") expectOutcome(SETTLED, `delivering after run ${r1} landed and its process died`, o1, "nothing");
    await expectHeld(SETTLED, `after run ${r1} landed, its process died and the next delivery settled it`, subject, sink, snap, []);
    const r2 = await snap.run();
    const cut: DeliveryPlan = { folderRun: r2, runs: [r2] };
    await writeDelivery(snap.db, faultySink(sink, { at: "commit" }), cut).then(
      () => {
        throw new SinkCheckError(SETTLED, "a commit the check made fail did not fail");
      },
      (e: unknown) => {
        if ((e as { code?: unknown }).code !== INJECTED) throw e;
      },
    );
    recordInterrupted(snap.db, sink.output, cut);
    const o2 = await deliverToSink(snap.db, sink, r2);
    if (o2.status === "nothing") {
      throw new SinkCheckError(SETTLED, `run ${r2}'s delivery died before its commit, yet arrived() said it had arrived: its runs were recorded delivered without reaching the output`);
    }
    expectOutcome(SETTLED, `delivering after run ${r2}'s delivery died before its commit`, o2, "delivered");
    await expectHeld(SETTLED, `after run ${r2}'s delivery died before its commit and the next one sent it`, subject, sink, snap, []);
  });
}

/** Every check, by name, for any test runner: `for (const c of sinkChecks) test(c.name, () => c.run(subject))`. */
export const sinkChecks: readonly SinkCheck[] = [
  { name: EACH_ONCE, run: checkEachRunDeliveredOnce },
  { name: IDEMPOTENT, run: checkRedeliveryIdempotent },
  { name: FAILED_PENDING, run: checkFailedDeliveryLeavesRunsPending },
  { name: SETTLED, run: checkInterruptedDeliverySettled },
];

/**
 * benefits-sync/testing: the conformance checks every sink of ours passes, for a sink of your own
 * (a `Sink` of "benefits-sync": a queue, a bucket, a warehouse), runnable in any test runner. Each check makes
 * a real snapshot of its own in a temp folder, delivers from it to a fresh output of your sink
 * through the delivery ledger, reads the output back with your `held`, and throws a
 * {@link SinkCheckError} saying what it saw when a promise does not hold:
 *
 * - each run is delivered once (and whole, and no run past the one asked for);
 * - a delivery sent again changes nothing (its outcome lost, or `export --run` again);
 * - a failed delivery leaves its runs pending (and nothing of them in the output);
 * - an interrupted delivery is settled by the next one (`arrived` tells a delivery that died
 *   before its commit from one that landed).
 *
 * @example
 * import { sinkChecks, type SinkSubject } from "benefits-sync/testing";
 * const subject: SinkSubject = { create: () => mySink(freshBucket()), held: (sink) => runsInBucket(sink) };
 * describe("my sink", () => { for (const c of sinkChecks) it(c.name, () => c.run(subject)); });
 */
export {
  sinkChecks,
  checkEachRunDeliveredOnce,
  checkRedeliveryIdempotent,
  checkFailedDeliveryLeavesRunsPending,
  checkInterruptedDeliverySettled,
} from "./sink-checks.js";
export type { SinkCheck } from "./sink-checks.js";
export { SinkCheckError } from "./check-tools.js";
export type { SinkSubject, HeldRun } from "./check-tools.js";

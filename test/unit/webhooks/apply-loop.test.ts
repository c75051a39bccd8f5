/**
 * The worker loop of `webhooks serve`, driven with fake time: its rests between drains leave no
 * listener on the stop signal behind (one was added per second and never removed: 59 after a
 * minute, a MaxListenersExceededWarning after 11 s), and an abort still ends a rest at once.
 */
import { getEventListeners } from "node:events";
import { afterEach, beforeEach, expect, it, vi } from "vitest";
import type { ApplyJobReport } from "../../../src/webhooks/apply-job.js";
import { applyLoop } from "../../../src/webhooks/apply-loop.js";

const nothing: ApplyJobReport = { runs: [], applied: 0, notFound: 0, retrying: 0, parked: 0, pruned: 0, pendingAfter: 0 };

beforeEach(() => void vi.useFakeTimers());
afterEach(() => void vi.useRealTimers());

it("600 drains a second apart leave no abort listener behind, and an abort ends the rest at once", async () => {
  const worker = new AbortController();
  let drains = 0;
  const loop = applyLoop({ drain: async () => (drains++, nothing), signal: worker.signal, log: () => {} });
  await vi.advanceTimersByTimeAsync(600_000);
  expect(drains).toBeGreaterThanOrEqual(600);
  // The rest in hand holds one listener at most.
  expect(getEventListeners(worker.signal, "abort").length).toBeLessThanOrEqual(1);
  worker.abort();
  await loop;
  expect(getEventListeners(worker.signal, "abort").length).toBe(0);
});

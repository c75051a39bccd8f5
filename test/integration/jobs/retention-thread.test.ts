/**
 * The scheduler's retention prunes on its own thread (retainOffThread, src/jobs/retention.ts): at
 * a million members a prune is seconds of SQLite work, in which a prune on the scheduler's event
 * loop left `GET /metrics` unanswered. Event-driven, not timed: the retention thread stops at the
 * prune's first step done (the test's gate), with the prune recorded as started and not finished;
 * `/metrics`, served from the test's thread on the scheduler's registry, must answer then; the
 * gate opens and the prune ends.
 */
import { describe, expect, it } from "vitest";
import { retainOffThread } from "../../../src/jobs/retention.js";
import { schedulerRegistry } from "../../../src/jobs/scheduler-metrics.js";
import type { Job } from "../../../src/jobs/job.js";
import { startMetricsEndpoint } from "../../../src/metrics/endpoint.js";
import { inProcessPort } from "../../../src/store/snapshot-port.js";
import { memorySource, type MemoryData } from "../../helpers/memory-source.js";
import { syncStarted, useTempStores } from "../../helpers/temp-store.js";

const setup = useTempStores();
const window = { from: "2026-01-01", to: "2026-03-31" };
const job: Job = { name: "members", description: "members", schedule: "0 2 * * *", timezone: "UTC", resources: ["groups", "members"], enabled: true, sinks: [] };

/** Forty members, each renamed in every run: each run closes forty versions. */
const world = (run: number): MemoryData => ({
  designs: [],
  groups: [{ id: "gp-G1", groupId: "G1", plans: [{ id: "p-G1", name: "A" }] }],
  members: Array.from({ length: 40 }, (_, i) => ({ id: `m${i}`, firstName: `Run${run}`, coverages: [{ id: `c-m${i}`, groupId: "G1", status: "active", startDate: "2026-01-01", endDate: null }] })),
  claims: [],
});

describe("the scheduler's retention", () => {
  it("prunes off the scheduler's thread: /metrics answers while the prune is in progress", async () => {
    const t = setup();
    for (let run = 1; run <= 4; run++) {
      await syncStarted({ source: memorySource(() => world(run)), store: inProcessPort(t.store), claimsWindow: window, resources: ["groups", "members"], groupConcurrency: 1 });
    }
    const metrics = schedulerRegistry(t.db, [job]);
    metrics.onOutcome("members", "succeeded", 1);
    const endpoint = await startMetricsEndpoint(metrics.registry, { port: 0 });
    const gate = new SharedArrayBuffer(4);
    const during: { step?: string; status?: number; text?: string; prune?: unknown } = {};
    try {
      const line = await retainOffThread(t.path, { keepRuns: 1 }, { outputs: [], reconcileJobs: [] }, {
        gate,
        onProgress: (step) => {
          during.step = step;
          void (async () => {
            try {
              during.prune = t.db.prepare("SELECT history_from_run, finished_at FROM _prunes").all();
              const res = await fetch(endpoint.url);
              during.status = res.status;
              during.text = await res.text();
            } finally {
              Atomics.store(new Int32Array(gate), 0, 1);
              Atomics.notify(new Int32Array(gate), 0);
            }
          })();
        },
      });
      expect(during.step).toMatch(/^closed versions/);
      expect(during.prune).toEqual([{ history_from_run: 4, finished_at: null }]);
      expect(during.status).toBe(200);
      expect(during.text).toContain('benefits_sync_job_runs_total{job="members",outcome="succeeded"} 1');
      expect(line).toMatchObject({ event: "retention.pruned", bound: "--keep-runs 1", historyFromRun: 4, runs: 3 });
      expect(t.db.prepare("SELECT finished_at IS NOT NULL FROM _prunes").pluck().get()).toBe(1);
    } finally {
      await endpoint.close();
    }
  });
});

import { afterEach, describe, expect, it } from "vitest";
import { defaultDeletePolicy } from "../../../src/store/runs/run-state.js";
import { scopeOf } from "../../../src/store/walk/scopes.js";
import { openWorkerSnapshot, type WorkerSnapshot } from "../../../src/store/worker-port.js";
import { TEST_PII_KEY, tempStore, type TempStore } from "../../helpers/temp-store.js";

/**
 * Recognised pages wait a few ms to cross to the store's thread together (KnownPageBatch); the
 * port still applies calls in the order they are made: a call made after a page waits for it.
 */
describe("the snapshot thread's port", () => {
  let t: TempStore | undefined;
  let port: WorkerSnapshot | undefined;
  afterEach(async () => {
    await port?.close();
    t?.cleanup();
  });

  it("applies a recognised page that is still waiting before the call made after it", async () => {
    t = tempStore();
    port = await openWorkerSnapshot(t.path, { piiKey: TEST_PII_KEY });
    await port.startRun("sync", {}, {});
    const scope = scopeOf("designs");
    await port.beginScope(scope);
    // No page is remembered: applying this one fails the run, if it is applied first.
    const page = port.applyPage(scope, { known: true, pageFp: { startAfter: undefined, fp: 1 }, next: undefined, end: true });
    page.catch(() => undefined);
    const outcome = await port.finishRun(defaultDeletePolicy);
    expect(outcome.status).toBe("failed");
    expect(outcome.failure?.message).toMatch(/not the one this snapshot knows/);
    await expect(page).rejects.toThrow(/not the one this snapshot knows/);
  });
});

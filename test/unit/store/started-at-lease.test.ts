/**
 * `runs.started_at` is when the run took the snapshot (its lease), not when it asked for it: a run
 * that waited for the write lock while the previous run committed its end must not look as if it
 * overlapped that run. The second run starts on a worker thread (its wait blocks its thread); the
 * first run's final commit is held open here until the second has asked, then closed. The second
 * store's clock is shared memory that this thread moves on (by a second) just before the commit:
 * with the stamp taken after the lock, this passes whatever the timing; with the stamp taken
 * before it, it fails when the second thread read its clock before the move. This thread waits
 * for that read (up to 200 ms, as nothing observable happens while a thread waits for SQLite's
 * lock, and a correct store reads no clock then); the wait decides only how surely a wrong store
 * is caught, never whether a right one passes.
 */
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join, resolve } from "node:path";
import { pathToFileURL } from "node:url";
import { Worker } from "node:worker_threads";
import { afterEach, describe, expect, it } from "vitest";
import { openDatabase } from "../../../src/store/file/database.js";
import { SnapshotStore } from "../../../src/store/snapshot.js";
import { TEST_PII_KEY } from "../../helpers/temp-store.js";

let dir: string | undefined;
afterEach(() => {
  if (dir) rmSync(dir, { recursive: true, force: true });
  dir = undefined;
});

/** A second store on its own thread: says when it asks for the snapshot, then the run it got. */
const SECOND = `
const { parentPort, workerData } = require("node:worker_threads");
const clock = new Int32Array(workerData.clock);
(async () => {
  const { openDatabase } = await import(workerData.dist + "/src/store/file/database.js");
  const { SnapshotStore } = await import(workerData.dist + "/src/store/snapshot.js");
  // The clock: [0] seconds past workerData.base, [1] how many times it was read.
  const now = () => (Atomics.add(clock, 1, 1), Atomics.notify(clock, 1), new Date(workerData.base + Atomics.load(clock, 0) * 1000));
  const open = (path, timed) => new SnapshotStore(openDatabase(path), { piiKey: Buffer.from(workerData.key, "latin1"), ...(timed ? { now } : {}) });
  // A first start elsewhere, so that the one measured runs warm (no module or code loading left).
  const warm = open(workerData.path + ".warm");
  warm.startRun("warm-up", {});
  warm.db.close();
  const store = open(workerData.path, true);
  parentPort.postMessage({ asking: Atomics.load(clock, 1) }); // with the clock reads so far
  const run = store.startRun("second", {});
  parentPort.postMessage({ runId: run.runId });
  store.db.close();
})().catch((e) => parentPort.postMessage({ error: String(e) }));
`;

describe("a run's start time", () => {
  it("a run that waited for the previous run's final commit starts after that run finished", async () => {
    dir = mkdtempSync(join(tmpdir(), "bsync-started-"));
    const path = join(dir, "snap.db");
    const first = new SnapshotStore(openDatabase(path), { piiKey: TEST_PII_KEY });
    const run = first.startRun("first", {});
    const db = first.db;
    // The first run's final commit, held open: the second run's claim waits for its write lock.
    db.exec("BEGIN IMMEDIATE");
    const base = Date.parse("2030-01-01T00:00:00.000Z");
    const clock = new Int32Array(new SharedArrayBuffer(8));
    const worker = new Worker(SECOND, {
      eval: true,
      workerData: { dist: pathToFileURL(resolve("dist")).href, path, key: TEST_PII_KEY.toString("latin1"), base, clock: clock.buffer },
    });
    const second = await new Promise<number>((done, fail) => {
      worker.on("error", fail);
      worker.on("message", (m: { asking?: number; runId?: number; error?: string }) => {
        if (m.error) fail(new Error(m.error));
        else if (m.runId !== undefined) done(m.runId);
        else if (m.asking !== undefined) {
          // Give a store that stamps before the lock the time to read the clock, then move the
          // clock a second on, and end the first run half-way through that second.
          Atomics.wait(clock, 1, m.asking, 200);
          Atomics.store(clock, 0, 1);
          db.prepare("UPDATE _runs SET status = 'succeeded', finished_at = ? WHERE run_id = ?").run(new Date(base + 500).toISOString(), run.runId);
          db.exec("COMMIT");
        }
      });
    });
    await worker.terminate();
    const [a, b] = [run.runId, second].map((id) => db.prepare("SELECT started_at, finished_at FROM _runs WHERE run_id = ?").get(id) as { started_at: string; finished_at: string | null });
    db.close();
    expect(Date.parse(b!.started_at), `second started ${b!.started_at}, first finished ${a!.finished_at}`).toBeGreaterThanOrEqual(Date.parse(a!.finished_at!));
  });
});

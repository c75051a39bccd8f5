/**
 * `runs.started_at` is when the run took the snapshot (its lease), not when it asked for it: a run
 * that waited for the write lock while the previous run committed its end must not look as if it
 * overlapped that run. The second run starts on a worker thread (its wait blocks its thread); the
 * first run's final commit is held open here until the second has asked, then closed. With the
 * stamp taken after the lock, this passes whatever the timing; with the stamp taken before it, it
 * fails unless the second thread was descheduled between asking and stamping (seen in 2 of 3 runs
 * on a loaded machine: nothing observable happens while a thread waits for SQLite's lock).
 */
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join, resolve } from "node:path";
import { pathToFileURL } from "node:url";
import { Worker } from "node:worker_threads";
import { afterEach, describe, expect, it } from "vitest";
import { openDatabase } from "../../../src/store/database.js";
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
(async () => {
  const { openDatabase } = await import(workerData.dist + "/src/store/database.js");
  const { SnapshotStore } = await import(workerData.dist + "/src/store/snapshot.js");
  const open = (path) => new SnapshotStore(openDatabase(path), { piiKey: Buffer.from(workerData.key, "latin1") });
  // A first start elsewhere, so that the one measured runs warm (no module or code loading left).
  const warm = open(workerData.path + ".warm");
  warm.startRun("warm-up", {});
  warm.db.close();
  const store = open(workerData.path);
  parentPort.postMessage({ asking: Date.now() });
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
    const worker = new Worker(SECOND, {
      eval: true,
      workerData: { dist: pathToFileURL(resolve("dist")).href, path, key: TEST_PII_KEY.toString("latin1") },
    });
    const second = await new Promise<number>((done, fail) => {
      worker.on("error", fail);
      worker.on("message", (m: { asking?: number; runId?: number; error?: string }) => {
        if (m.error) fail(new Error(m.error));
        else if (m.runId !== undefined) done(m.runId);
        else if (m.asking !== undefined) {
          // Let the clock move a few milliseconds past the second run's request (a run's times are
          // kept to the millisecond), then end the first run.
          while (Date.now() <= m.asking + 3);
          db.prepare("UPDATE _runs SET status = 'succeeded', finished_at = ? WHERE run_id = ?").run(new Date().toISOString(), run.runId);
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

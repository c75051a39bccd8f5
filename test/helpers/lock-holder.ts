/**
 * Another thread that holds a snapshot's write lock (BEGIN IMMEDIATE), as a sync in another
 * process would. It lets go after `holdMs` by its own clock, or at once when told (`release()`):
 * a thread that is inside SQLite's busy wait cannot tell it to, so a test of "waits for the lock"
 * relies on the first, and a test of "does not wait" on the second.
 */
import { createRequire } from "node:module";
import { Worker } from "node:worker_threads";

export interface LockHolder {
  /** Settles when the holder has let go of the lock (rolled back). */
  readonly released: Promise<void>;
  /** Let go now. */
  release(): Promise<void>;
}

export async function holdWriteLock(path: string, holdMs: number): Promise<LockHolder> {
  const flag = new Int32Array(new SharedArrayBuffer(4));
  const w = new Worker(
    `const { parentPort, workerData } = require("node:worker_threads");
     const Database = require(workerData.module);
     const db = new Database(workerData.path);
     db.exec("BEGIN IMMEDIATE");
     db.prepare("INSERT INTO _meta (key, value) VALUES ('lock-holder', 'x') ON CONFLICT (key) DO NOTHING").run();
     parentPort.postMessage("held");
     Atomics.wait(workerData.flag, 0, 0, workerData.holdMs);
     db.exec("ROLLBACK");
     db.close();
     parentPort.postMessage("released");`,
    { eval: true, workerData: { path, holdMs, flag, module: createRequire(import.meta.url).resolve("better-sqlite3") } },
  );
  const released = new Promise<void>((resolve, reject) => {
    w.on("error", reject);
    w.on("message", (m) => m === "released" && resolve());
  });
  await new Promise<void>((resolve, reject) => {
    w.on("error", reject);
    w.on("message", (m) => m === "held" && resolve());
  });
  return {
    released,
    release: async () => {
      Atomics.store(flag, 0, 1);
      Atomics.notify(flag, 0);
      await released;
      await w.terminate();
    },
  };
}

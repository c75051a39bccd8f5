/**
 * The scheduler's retention on its own thread (see `retainOffThread`, retention.ts): a prune at a
 * million members takes seconds of SQLite work, in which the scheduler's event loop would answer
 * nothing (`/metrics`, its timers, a stop signal). The thread opens its own connection, prunes,
 * and answers with the log line.
 */
import { parentPort, workerData } from "node:worker_threads";
import { openDatabase } from "../store/file/database.js";
import { failedLine, retain, retentionBound, type RetentionWorkerInit } from "./retention.js";

const port = parentPort;
if (!port) throw new Error("retention-worker must run in a worker thread");
const init = workerData as RetentionWorkerInit;
// Tests: the thread waits at the prune's first step done until the other side lets it go on.
const gate = init.gate ? new Int32Array(init.gate) : undefined;
let told = false;
const onProgress = (step: string) => {
  if (told) return;
  told = true;
  port.postMessage({ progress: step });
  if (gate) Atomics.wait(gate, 0, 0);
};
try {
  const db = openDatabase(init.dbPath);
  try {
    port.postMessage({ line: retain(db, init.retention, init.holders, undefined, onProgress) });
  } finally {
    db.close();
  }
} catch (e) {
  // The snapshot could not be opened.
  port.postMessage({ line: failedLine(retentionBound(init.retention, new Date()), e instanceof Error ? e.message : String(e)) });
}

/**
 * The snapshot on its own thread (see worker-port.ts). It owns the database connection and
 * applies the messages of the sync engine in order; a failure answers the message that caused it.
 */
import { parentPort, workerData } from "node:worker_threads";
import { openDatabase } from "./file/database.js";
import { asDiskFull } from "./file/disk-full.js";
import { applyPageInput, runStart } from "./snapshot-port.js";
import { SnapshotStore, type SnapshotOptions } from "./snapshot.js";
import { startedRunOf } from "./runs/start-failure.js";

interface WorkerInit {
  readonly dbPath: string;
  readonly piiKeyHex: string;
  readonly options: Omit<SnapshotOptions, "piiKey" | "now">;
}

export interface WorkerRequest {
  readonly id: number;
  readonly op: "startRun" | "beginScope" | "knownPages" | "applyPage" | "finishRun" | "currentGroups" | "runMark" | "claimsToVerify" | "deleteCandidates" | "heartbeat" | "close";
  readonly args: unknown[];
}

const port = parentPort;
if (!port) throw new Error("snapshot-worker must run in a worker thread");
const init = workerData as WorkerInit;
let store: SnapshotStore | undefined;
try {
  store = new SnapshotStore(openDatabase(init.dbPath), { ...init.options, piiKey: Buffer.from(init.piiKeyHex, "hex") });
  port.postMessage({ id: 0, ok: true });
} catch (e) {
  port.postMessage({ id: 0, ok: false, error: describe(e) });
}

/** Requests sent together (see KnownPageBatch): applied in order, answered together. */
export interface WorkerBatch {
  readonly batch: readonly WorkerRequest[];
}

export interface WorkerReply {
  readonly id: number;
  readonly ok: boolean;
  readonly result?: unknown;
  /** `startedRunId` and `recorded`: a run left by a failed start (see start-failure.ts). */
  readonly error?: { name: string; code: string; message: string; startedRunId?: number; recorded?: boolean };
}

port.on("message", (m: WorkerRequest | WorkerBatch) => {
  if ("batch" in m) port.postMessage({ batch: m.batch.map(handle) });
  else port.postMessage(handle(m));
});

function handle(m: WorkerRequest): WorkerReply {
  try {
    if (!store) throw new Error("the snapshot could not be opened");
    const s = store;
    const a = m.args as [never, never, never];
    let result: unknown;
    switch (m.op) {
      case "startRun":
        result = runStart(s, s.startRun(a[0], a[1], a[2]));
        break;
      case "claimsToVerify":
        result = s.claimsToVerify();
        break;
      case "deleteCandidates":
        result = s.deleteCandidates();
        break;
      case "heartbeat":
        s.heartbeat();
        break;
      case "beginScope":
        result = s.beginScope(a[0]);
        break;
      case "knownPages":
        result = s.knownPages(a[0]);
        break;
      case "applyPage":
        result = applyPageInput(s, a[0], a[1]);
        break;
      case "finishRun":
        result = s.finishRun(a[0], a[1]);
        break;
      case "currentGroups":
        result = s.currentGroups();
        break;
      case "runMark":
        result = s.runMark();
        break;
      case "close":
        s.db.close();
        store = undefined;
        break;
    }
    return { id: m.id, ok: true, result };
  } catch (e) {
    return { id: m.id, ok: false, error: describe(e) };
  }
}

function describe(e: unknown): NonNullable<WorkerReply["error"]> {
  const full = asDiskFull(e, init.dbPath);
  const err = full instanceof Error ? full : new Error(String(full));
  return { name: err.name, code: (err as { code?: string }).code ?? err.name, message: err.message, ...startedRunOf(e) };
}

import { Worker } from "node:worker_threads";
import { workerScript } from "../worker-script.js";
import type { SnapshotOptions } from "./snapshot.js";
import type { SnapshotPort } from "./snapshot-port.js";
import type { WorkerRequest } from "./snapshot-worker.js";

/** A snapshot port whose store runs on a worker thread; `close()` ends the thread. */
export interface WorkerSnapshot extends SnapshotPort {
  close(): Promise<void>;
}

/** The snapshot thread's young generation, in MB (see openWorkerSnapshot). */
const StoreYoungGenerationMb = 8;

/** A failure inside the snapshot thread, with the code it had there. */
export class SnapshotThreadError extends Error {
  readonly code: string;
  constructor(info: { name: string; code: string; message: string }) {
    super(info.message);
    this.name = info.name;
    this.code = info.code;
  }
}

/**
 * Open the snapshot at `dbPath` on its own thread. Page applications are posted without waiting
 * (the thread applies them in order); every other call waits for its answer.
 */
export async function openWorkerSnapshot(dbPath: string, options: SnapshotOptions): Promise<WorkerSnapshot> {
  const { piiKey, now: _now, ...rest } = options;
  const worker = new Worker(workerScript(import.meta.url, "./snapshot-worker.js"), {
    workerData: { dbPath, piiKeyHex: piiKey.toString("hex"), options: rest },
    // An 8 MB young generation: on a load from empty the thread parses and encodes pages too (see
    // the sync's STORE_BUSY_PAGES), and with V8's default it peaked 27 to 47 MB higher on the
    // benchmark's 100k-member first sync (263 to 278 MB), for no gain in time.
    resourceLimits: { maxYoungGenerationSizeMb: StoreYoungGenerationMb },
  });
  const waiting = new Map<number, { resolve: (v: unknown) => void; reject: (e: Error) => void }>();
  let nextId = 1;
  let dead: Error | undefined;
  const failAll = (e: Error) => {
    dead = e;
    for (const w of waiting.values()) w.reject(e);
    waiting.clear();
  };
  worker.on("message", (m: { id: number; ok: boolean; result?: unknown; error?: { name: string; code: string; message: string } }) => {
    const w = waiting.get(m.id);
    if (!w) return;
    waiting.delete(m.id);
    if (m.ok) w.resolve(m.result);
    else w.reject(new SnapshotThreadError(m.error!));
  });
  worker.on("error", (e) => failAll(e));
  worker.on("exit", (code) => failAll(new Error(`the snapshot thread exited (${code})`)));
  const call = <T>(op: WorkerRequest["op"], ...args: unknown[]): Promise<T> => {
    if (dead) return Promise.reject(dead);
    const id = nextId++;
    return new Promise<T>((resolve, reject) => {
      waiting.set(id, { resolve: resolve as (v: unknown) => void, reject });
      worker.postMessage({ id, op, args } satisfies WorkerRequest);
    });
  };
  await new Promise<void>((resolve, reject) => {
    waiting.set(0, { resolve: () => resolve(), reject });
  });
  return {
    encoding: { piiKey, piiMode: rest.piiMode, idFields: rest.idFields },
    startRun: (job, opts, flags) => call("startRun", job, opts, flags),
    beginScope: (scope) => call("beginScope", scope),
    knownPages: (scope) => call("knownPages", scope),
    applyPage: (scope, page) => call("applyPage", scope, page),
    finishRun: (policy, failure) => call("finishRun", policy, failure),
    currentGroups: () => call("currentGroups"),
    claimsToVerify: () => call("claimsToVerify"),
    deleteCandidates: () => call("deleteCandidates"),
    heartbeat: () => {
      call("heartbeat").catch(() => undefined);
    },
    async close() {
      if (!dead) await call("close").catch(() => undefined);
      await worker.terminate();
    },
  };
}

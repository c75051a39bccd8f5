import { Worker } from "node:worker_threads";
import { workerScript } from "../worker-script.js";
import type { SnapshotOptions } from "./snapshot.js";
import type { PageInput, SnapshotPort } from "./snapshot-port.js";
import type { WorkerBatch, WorkerReply, WorkerRequest } from "./snapshot-worker.js";

/** A snapshot port whose store runs on a worker thread; `close()` ends the thread. */
export interface WorkerSnapshot extends SnapshotPort {
  close(): Promise<void>;
}

/** The snapshot thread's young generation, in MB (see openWorkerSnapshot). */
const StoreYoungGenerationMb = 8;

/**
 * A page the walk recognised by its bytes is a few hundred bytes of bookkeeping for the store,
 * and each message between threads cost both of them a wake-up (6,451 such pages on a no-change
 * re-sync at 100k members; a round trip a millisecond apart cost the two threads about 110 µs of
 * CPU, against 23 µs each in batches of 6). Recognised pages are sent together: when `pages` are
 * waiting, or `ms` after the first of them, or before any other call (calls are applied in
 * order). Other pages go at once: on a first sync the store waits for them.
 */
const KnownPageBatch = { pages: 64, ms: 8 };

/** A failure inside the snapshot thread, with the code it had there. */
export class SnapshotThreadError extends Error {
  readonly code: string;
  /** The run a failed start left in the run log, and whether it is recorded failed (see start-failure.ts). */
  readonly startedRunId: number | undefined;
  readonly recorded: boolean | undefined;
  constructor(info: { name: string; code: string; message: string; startedRunId?: number; recorded?: boolean }) {
    super(info.message);
    this.name = info.name;
    this.code = info.code;
    this.startedRunId = info.startedRunId;
    this.recorded = info.recorded;
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
  const answered = (m: WorkerReply) => {
    const w = waiting.get(m.id);
    if (!w) return;
    waiting.delete(m.id);
    if (m.ok) w.resolve(m.result);
    else w.reject(new SnapshotThreadError(m.error!));
  };
  worker.on("message", (m: WorkerReply | { batch: WorkerReply[] }) => {
    if ("batch" in m) for (const r of m.batch) answered(r);
    else answered(m);
  });
  worker.on("error", (e) => failAll(e));
  worker.on("exit", (code) => {
    if (batchTimer) clearTimeout(batchTimer);
    failAll(new Error(`the snapshot thread exited (${code})`));
  });
  // Recognised pages wait here a few ms and go across together (see KnownPageBatch).
  let batch: WorkerRequest[] = [];
  let batchTimer: NodeJS.Timeout | undefined;
  const flush = () => {
    if (batchTimer) clearTimeout(batchTimer);
    batchTimer = undefined;
    if (batch.length === 0) return;
    const sending = batch;
    batch = [];
    worker.postMessage(sending.length === 1 ? sending[0] : ({ batch: sending } satisfies WorkerBatch));
  };
  const call = <T>(op: WorkerRequest["op"], ...args: unknown[]): Promise<T> => {
    if (dead) return Promise.reject(dead);
    const id = nextId++;
    return new Promise<T>((resolve, reject) => {
      waiting.set(id, { resolve: resolve as (v: unknown) => void, reject });
      const request = { id, op, args } satisfies WorkerRequest;
      if (op === "applyPage" && (args[1] as PageInput).known) {
        batch.push(request);
        if (batch.length >= KnownPageBatch.pages) flush();
        else batchTimer ??= setTimeout(flush, KnownPageBatch.ms);
        return;
      }
      // Calls are applied in the order they are made: the pages waiting go first.
      flush();
      worker.postMessage(request);
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
    runMark: () => call("runMark"),
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

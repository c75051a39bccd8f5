/**
 * The receiver's side of the inbox's thread (inbox-thread.ts): `accept` resolves once the group is
 * committed and fsynced there, with the same answers as {@link Inbox.accept}; `probe` and the
 * worker's calls run there too, so no wait on the inbox's lock blocks this thread. A failure of
 * the thread fails every call in flight (the receiver answers them 503: retry).
 */
import { Worker } from "node:worker_threads";
import { workerScript } from "../worker-script.js";
import type { Inbox, InboxEvent } from "./inbox.js";
import type { InboxOp } from "./inbox-thread.js";

/** A failure inside the inbox's thread, with the code it had there (SQLITE_FULL, SQLITE_BUSY...). */
export class InboxThreadError extends Error {
  readonly code: string;
  constructor(info: { name: string; code: string; message: string }) {
    super(info.message);
    this.name = info.name;
    this.code = info.code;
  }
}

/** The inbox's methods the worker uses, each run on the inbox's thread. */
export type ThreadInbox = { [K in Exclude<InboxOp, "accept">]: (...args: Parameters<Inbox[K]>) => Promise<ReturnType<Inbox[K]>> };

export interface InboxWriter extends ThreadInbox {
  accept(events: InboxEvent[]): Promise<boolean[]>;
  close(): Promise<void>;
}

/**
 * Start the inbox's thread on the inbox at `path` (already opened and checked on this thread).
 *
 * @example
 * const w = await openInboxWriter("/var/lib/bs/benefits-sync.inbox.db");
 * await w.accept([{ id: "evt_1", type: "member_update", memberId: "m1", receivedAt }]); // [true]
 */
export async function openInboxWriter(path: string): Promise<InboxWriter> {
  const worker = new Worker(workerScript(import.meta.url, "./inbox-thread.js"), { workerData: { path } });
  const waiting = new Map<number, { resolve: (v: unknown) => void; reject: (e: Error) => void }>();
  let nextId = 1;
  let dead: Error | undefined;
  const failAll = (e: Error) => {
    dead ??= e;
    for (const w of waiting.values()) w.reject(e);
    waiting.clear();
  };
  worker.on("message", (m: { id: number; ok: boolean; result?: unknown; error?: { name: string; code: string; message: string } }) => {
    const w = waiting.get(m.id);
    if (!w) return;
    waiting.delete(m.id);
    if (m.ok) w.resolve(m.result);
    else w.reject(new InboxThreadError(m.error!));
  });
  worker.on("error", (e) => failAll(e));
  worker.on("exit", (code) => failAll(new Error(`the inbox's writer thread exited (${code})`)));
  const call = <T>(op: InboxOp | "close", ...args: unknown[]): Promise<T> => {
    if (dead) return Promise.reject(dead);
    const id = nextId++;
    return new Promise<T>((resolve, reject) => {
      waiting.set(id, { resolve: resolve as (v: unknown) => void, reject });
      worker.postMessage({ id, op, args });
    });
  };
  await new Promise<void>((resolve, reject) => waiting.set(0, { resolve: () => resolve(), reject }));
  return {
    accept: (events) => call<boolean[] | undefined>("accept", events).then((r) => r ?? []),
    probe: () => call("probe"),
    due: (...args) => call("due", ...args),
    applied: (...args) => call("applied", ...args),
    failed: (...args) => call("failed", ...args),
    park: (...args) => call("park", ...args),
    prune: (...args) => call("prune", ...args),
    status: (...args) => call("status", ...args),
    async close() {
      if (!dead) await call("close").catch(() => undefined);
      await worker.terminate();
    },
  };
}

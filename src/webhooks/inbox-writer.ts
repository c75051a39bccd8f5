/**
 * The receiver's side of the inbox's writer thread (inbox-thread.ts): `accept` resolves once the
 * group is committed and fsynced there, with the same answers as {@link Inbox.accept}. A failure of
 * the thread fails every group in flight (the receiver answers them 503: retry).
 */
import { Worker } from "node:worker_threads";
import { workerScript } from "../worker-script.js";
import type { InboxEvent } from "./inbox.js";

/** A failure inside the writer thread, with the code it had there (SQLITE_FULL, SQLITE_IOERR...). */
export class InboxThreadError extends Error {
  readonly code: string;
  constructor(info: { name: string; code: string; message: string }) {
    super(info.message);
    this.name = info.name;
    this.code = info.code;
  }
}

export interface InboxWriter {
  accept(events: InboxEvent[]): Promise<boolean[]>;
  close(): Promise<void>;
}

/**
 * Start the writer thread on the inbox at `path` (already opened and checked on this thread).
 *
 * @example
 * const w = await openInboxWriter("/var/lib/bs/benefits-sync.inbox.db");
 * await w.accept([{ id: "evt_1", type: "member_update", memberId: "m1", receivedAt }]); // [true]
 */
export async function openInboxWriter(path: string): Promise<InboxWriter> {
  const worker = new Worker(workerScript(import.meta.url, "./inbox-thread.js"), { workerData: { path } });
  const waiting = new Map<number, { resolve: (v: boolean[]) => void; reject: (e: Error) => void }>();
  let nextId = 1;
  let dead: Error | undefined;
  const failAll = (e: Error) => {
    dead ??= e;
    for (const w of waiting.values()) w.reject(e);
    waiting.clear();
  };
  worker.on("message", (m: { id: number; ok: boolean; results?: boolean[]; error?: { name: string; code: string; message: string } }) => {
    const w = waiting.get(m.id);
    if (!w) return;
    waiting.delete(m.id);
    if (m.ok) w.resolve(m.results ?? []);
    else w.reject(new InboxThreadError(m.error!));
  });
  worker.on("error", (e) => failAll(e));
  worker.on("exit", (code) => failAll(new Error(`the inbox's writer thread exited (${code})`)));
  const send = (message: { events?: InboxEvent[]; close?: true }, id = nextId++): Promise<boolean[]> => {
    if (dead) return Promise.reject(dead);
    return new Promise((resolve, reject) => {
      waiting.set(id, { resolve, reject });
      worker.postMessage({ id, ...message });
    });
  };
  await new Promise<void>((resolve, reject) => waiting.set(0, { resolve: () => resolve(), reject }));
  return {
    accept: (events) => send({ events }),
    async close() {
      if (!dead) await send({ close: true }).catch(() => undefined);
      await worker.terminate();
    },
  };
}

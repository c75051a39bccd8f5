/**
 * The inbox's thread: commits each group of accepted events (synchronous = FULL, so an fsync) off
 * the receiver's event loop. Beside a sync writing the same disk an fsync took tens of
 * milliseconds, and on the receiver's thread every request waited for it: the receiver went on
 * reading and parsing requests only between commits. Here the next group gathers while one commits.
 * The health probe and the worker's reads and marks (due, applied, failed, park, prune, status)
 * run here too: a lock held on the inbox by another program waits here, never on the event loop.
 *
 * Messages: {id, op, args} → {id, ok, result} or {id, ok: false, error}; {id, op: "close"} closes.
 */
import { parentPort, workerData } from "node:worker_threads";
import { Inbox } from "./inbox.js";

/** What the thread does for the other side: the methods of the inbox it may call. */
export const INBOX_OPS = ["accept", "probe", "due", "applied", "failed", "park", "prune", "status"] as const;
export type InboxOp = (typeof INBOX_OPS)[number];

const port = parentPort!;
const { path } = workerData as { path: string };
let inbox: Inbox | undefined;
try {
  inbox = Inbox.open(path);
  port.postMessage({ id: 0, ok: true });
} catch (e) {
  port.postMessage({ id: 0, ok: false, error: describe(e) });
}

function describe(e: unknown): { name: string; code: string; message: string } {
  const err = e instanceof Error ? e : new Error(String(e));
  return { name: err.name, code: String((err as { code?: unknown }).code ?? "ERROR"), message: err.message };
}

port.on("message", (m: { id: number; op: InboxOp | "close"; args?: unknown[] }) => {
  if (m.op === "close") {
    inbox?.close();
    inbox = undefined;
    port.postMessage({ id: m.id, ok: true });
    port.close();
    return;
  }
  try {
    if (!inbox) throw new Error("the inbox is closed");
    if (!INBOX_OPS.includes(m.op)) throw new Error(`no such inbox operation: ${String(m.op)}`);
    const method = inbox[m.op] as (...args: unknown[]) => unknown;
    port.postMessage({ id: m.id, ok: true, result: method.apply(inbox, m.args ?? []) });
  } catch (e) {
    port.postMessage({ id: m.id, ok: false, error: describe(e) });
  }
});

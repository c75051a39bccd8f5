/**
 * The inbox's writer thread: commits each group of accepted events (synchronous = FULL, so an
 * fsync) off the receiver's event loop. Beside a sync writing the same disk an fsync took tens of
 * milliseconds, and on the receiver's thread every request waited for it: the receiver went on
 * reading and parsing requests only between commits. Here the next group gathers while one commits.
 *
 * Messages: {id, events} → {id, ok, results} or {id, ok: false, error}; {id, close: true} closes.
 */
import { parentPort, workerData } from "node:worker_threads";
import { Inbox, type InboxEvent } from "./inbox.js";

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

port.on("message", (m: { id: number; events?: InboxEvent[]; close?: true }) => {
  if (m.close) {
    inbox?.close();
    inbox = undefined;
    port.postMessage({ id: m.id, ok: true });
    port.close();
    return;
  }
  try {
    if (!inbox) throw new Error("the inbox is closed");
    port.postMessage({ id: m.id, ok: true, results: inbox.accept(m.events ?? []) });
  } catch (e) {
    port.postMessage({ id: m.id, ok: false, error: describe(e) });
  }
});

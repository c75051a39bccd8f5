/**
 * `benefits-sync webhooks status`: how far the snapshot lags the events received. Reads the inbox
 * beside the snapshot (never creating one): depth, age of the oldest pending event, the events
 * given up on and why, and the last run that applied events.
 */
import { existsSync } from "node:fs";
import type { CommandContext } from "../context.js";
import { ExitCode } from "../exit-codes.js";
import { shown } from "../shown.js";

export async function run(ctx: CommandContext): Promise<number> {
  const config = ctx.config();
  const { Inbox, inboxPathFor } = await import("../../webhooks/inbox.js");
  const path = inboxPathFor(config.db);
  if (!existsSync(path)) {
    if (ctx.globals.json) ctx.stdout.write(`${JSON.stringify({ inbox: path, pending: 0, oldestPendingAt: null, oldestPendingAgeSeconds: null, parked: [], ignored: 0, applied: 0, lastApplied: null })}\n`);
    else ctx.stdout.write(`No webhook event received yet (no inbox at ${path}).\n`);
    return ExitCode.OK;
  }
  const inbox = Inbox.open(path);
  let s;
  try {
    s = inbox.status();
  } finally {
    inbox.close();
  }
  const age = s.oldestPendingAt === null ? null : Math.max(0, Math.floor((Date.now() - Date.parse(s.oldestPendingAt)) / 1000));
  const lastApplied = s.lastAppliedAt === null ? null : { runId: s.lastAppliedRun, at: s.lastAppliedAt };
  if (ctx.globals.json) {
    const { lastAppliedAt: _at, lastAppliedRun: _run, ...rest } = s;
    ctx.stdout.write(`${JSON.stringify({ inbox: path, ...rest, oldestPendingAgeSeconds: age, lastApplied })}\n`);
    return ExitCode.OK;
  }
  const lines = [
    `Webhook inbox: ${path}`,
    `  pending:      ${s.pending}${age === null ? "" : ` (the oldest received ${age} s ago)`}`,
    `  parked:       ${s.parked.length === 0 ? "none" : `${s.parked.length}${s.parked.length >= 20 ? " (the latest 20)" : ""}, given up on (a new event for the member is tried again):`}`,
    ...s.parked.map((p) => `    ${shown(p.id)} (member ${p.memberId === null ? "?" : shown(p.memberId)}) at ${shown(p.at)}: ${shown(p.reason)}`),
    `  ignored:      ${s.ignored} (other event types: recorded, not acted on)`,
    `  applied:      ${s.applied}`,
    `  last applied: ${lastApplied === null ? "never" : `run ${lastApplied.runId ?? "?"} at ${lastApplied.at}`}`,
  ];
  ctx.stdout.write(`${lines.join("\n")}\n`);
  return ExitCode.OK;
}

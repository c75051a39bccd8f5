/**
 * `benefits-sync webhooks serve`: receive the service's deliveries into the inbox beside the
 * snapshot (see src/webhooks/), and apply them: every second the worker drains what is due into the
 * snapshot, as `webhooks apply` does. Logs one JSON object per line on stdout, as `schedule` does.
 * On SIGINT or SIGTERM: the listener closes, the requests in hand are answered once their events
 * are committed, the member in hand is applied, and the command exits 130 or 143.
 */
import type { CommandContext } from "../context.js";
import { ExitCode } from "../exit-codes.js";

/** How often the counters' textfile is rewritten while serving. */
const TEXTFILE_EVERY_MS = 15_000;

export async function run(ctx: CommandContext): Promise<number> {
  const config = ctx.config();
  const { startReceiver } = await import("../../webhooks/receiver.js");
  const { receiverMetrics, receiverTextfileFor } = await import("../../webhooks/counters.js");
  const { jsonLines, writeTextfile } = await import("../../jobs/telemetry.js");
  const log = jsonLines(ctx.stdout);
  const stopped = new Promise<NodeJS.Signals>((resolve) => {
    process.once("SIGINT", () => resolve("SIGINT"));
    process.once("SIGTERM", () => resolve("SIGTERM"));
  });
  const r = await startReceiver(config, {
    env: ctx.env,
    cwd: ctx.cwd,
    port: ctx.options.port as number | undefined,
    host: ctx.options.host as string | undefined,
    insecureNoSignature: ctx.options.insecureNoSignature === true,
    metrics: ctx.options.metricsPort !== undefined,
    onStorageError: (e) => log({ event: "webhooks.storage_error", message: e instanceof Error ? e.message : String(e), code: (e as { code?: string }).code }),
  });
  const textfile = config.schedule.textfile ? receiverTextfileFor(config.schedule.textfile) : undefined;
  const writeMetrics = () => {
    if (!textfile) return;
    try {
      writeTextfile(textfile, receiverMetrics(r.counters));
    } catch (e) {
      log({ event: "webhooks.textfile_error", file: textfile, message: e instanceof Error ? e.message : String(e) });
    }
  };
  writeMetrics();
  const timer = setInterval(writeMetrics, TEXTFILE_EVERY_MS);
  timer.unref();
  const { serveMetrics } = await import("../../metrics/endpoint.js");
  const metricsAt = { port: ctx.options.metricsPort as number, host: ctx.options.metricsHost as string | undefined };
  // A metrics port it cannot take ends the command: the receiver started first is stopped with it.
  const endpoint = r.registry
    ? await serveMetrics(r.registry, metricsAt).catch(async (e: unknown) => {
        await r.stop();
        throw e;
      })
    : undefined;
  log({
    event: "webhooks.listening",
    url: r.url,
    inbox: r.inboxPath,
    signature: r.secrets > 0 ? `${r.secrets} secret${r.secrets > 1 ? "s" : ""}` : "none (--insecure-no-signature)",
    auth: r.auth?.what ?? "none",
    ...(textfile ? { textfile } : {}),
    ...(endpoint ? { metrics: endpoint.url } : {}),
  });
  const worker = new AbortController();
  const { applyWebhooksOnce } = await import("../../webhooks/apply-job.js");
  const { applyLoop } = await import("../../webhooks/apply-loop.js");
  const applying = applyLoop({ drain: (signal) => applyWebhooksOnce(config, { signal, inbox: r.threadInbox, onApplied: r.applyLag }), signal: worker.signal, log });
  const sig = await stopped;
  worker.abort();
  await applying;
  await r.stop();
  await endpoint?.close();
  clearInterval(timer);
  writeMetrics();
  const c = r.counters;
  log({ event: "webhooks.stopped", signal: sig, received: c.received, accepted: c.accepted, duplicates: c.duplicates, ignored: c.ignored, rejected: c.rejected });
  return sig === "SIGINT" ? ExitCode.SIGINT : ExitCode.SIGTERM;
}

/**
 * OpenTelemetry for one command: off (nothing loaded, nothing sent, no cost) unless the standard
 * `OTEL_EXPORTER_OTLP_*` variables set an endpoint (otel-env.ts); then the SDK is loaded and
 * registered (otel-sdk.ts), and stopped when the command ends, its last spans and metrics
 * exported within the export deadline. A collector that is down or slow never fails the command:
 * at most one line on `warn`.
 */
import { telemetryPlan } from "./otel-env.js";
import type { RunningTelemetry } from "./otel-sdk.js";

/** What a command's end waits for: nothing when telemetry is off. */
const OFF: RunningTelemetry = { shutdown: () => Promise.resolve() };

/**
 * Start what `env` asks for. Never throws: an SDK that cannot start is one warning line, and the
 * command runs without it.
 *
 * @example const telemetry = await startTelemetry(process.env, { version, warn }); try { ... } finally { await telemetry.shutdown(); }
 */
export async function startTelemetry(
  env: Readonly<Record<string, string | undefined>>,
  io: { readonly version: string; readonly warn: (line: string) => void },
): Promise<RunningTelemetry> {
  const { plan, problems } = telemetryPlan(env);
  for (const p of problems) io.warn(`benefits-sync: telemetry: ${p}`);
  if (!plan) return OFF;
  try {
    return await (await import("./otel-sdk.js")).startOtel(plan, io);
  } catch (e) {
    io.warn(`benefits-sync: telemetry: the OpenTelemetry SDK did not start (${e instanceof Error ? e.name : "error"}); the command goes on without it`);
    return OFF;
  }
}

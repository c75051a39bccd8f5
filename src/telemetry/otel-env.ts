/**
 * Whether OpenTelemetry is on, read from the standard variables alone: off unless an OTLP
 * endpoint is set (`OTEL_EXPORTER_OTLP_ENDPOINT` for both signals, or `..._TRACES_ENDPOINT` /
 * `..._METRICS_ENDPOINT` for one), and off whatever else is set when `OTEL_SDK_DISABLED=true` or a
 * signal's exporter is `none`. Pure: the SDK is loaded (otel-sdk.ts) only when this says so.
 */

/** The OTLP encodings over HTTP this build sends; `grpc` is not one of them. */
export const OtlpProtocols = ["http/protobuf", "http/json"] as const;
export type OtlpProtocol = (typeof OtlpProtocols)[number];

export interface SignalPlan {
  readonly protocol: OtlpProtocol;
  /** Where the signal goes, as a warning may name it: the endpoint's origin (no path, no userinfo). */
  readonly origin: string;
}

export interface TelemetryPlan {
  readonly traces?: SignalPlan;
  readonly metrics?: SignalPlan;
  readonly serviceName: string;
  /** Each export's deadline, and so the longest a command waits for its last export at exit. */
  readonly timeoutMs: number;
  readonly metricIntervalMs: number;
}

type Env = Readonly<Record<string, string | undefined>>;

/**
 * The deadline of an export when `OTEL_EXPORTER_OTLP_TIMEOUT` does not say: a third of the spec's
 * 10 s, because a cron job waits for its last export, and a collector nearby answers in
 * milliseconds. The exporter's retries stop within it too.
 */
export const DEFAULT_EXPORT_TIMEOUT_MS = 3_000;
const DEFAULT_METRIC_INTERVAL_MS = 60_000;

const set = (v: string | undefined): string | undefined => (v !== undefined && v.trim() !== "" ? v.trim() : undefined);

function positive(v: string | undefined, fallback: number): number {
  const n = v === undefined ? NaN : Number(v);
  return Number.isFinite(n) && n > 0 ? n : fallback;
}

/** A signal's plan, or a reason it stays off that is worth a line (undefined: off, nothing to say). */
function signal(env: Env, name: "TRACES" | "METRICS"): SignalPlan | string | undefined {
  if (set(env[`OTEL_${name}_EXPORTER`])?.toLowerCase() === "none") return undefined;
  const endpoint = set(env[`OTEL_EXPORTER_OTLP_${name}_ENDPOINT`]) ?? set(env.OTEL_EXPORTER_OTLP_ENDPOINT);
  if (endpoint === undefined) return undefined;
  const protocol = (set(env[`OTEL_EXPORTER_OTLP_${name}_PROTOCOL`]) ?? set(env.OTEL_EXPORTER_OTLP_PROTOCOL) ?? "http/protobuf").toLowerCase();
  if (!(OtlpProtocols as readonly string[]).includes(protocol)) {
    return `OTEL_EXPORTER_OTLP_PROTOCOL ${JSON.stringify(protocol)} is not supported (${OtlpProtocols.join(" or ")}): ${name.toLowerCase()} are not exported`;
  }
  let origin: string;
  try {
    const url = new URL(endpoint);
    if (url.protocol !== "http:" && url.protocol !== "https:") throw new TypeError("not http");
    origin = url.origin;
  } catch {
    return `the OTLP ${name.toLowerCase()} endpoint is not an http(s) URL: ${name.toLowerCase()} are not exported`;
  }
  return { protocol: protocol as OtlpProtocol, origin };
}

/**
 * What to start, from `env`: `plan` undefined when nothing is exported; `problems`, lines worth a
 * warning (an endpoint set but unusable).
 *
 * @example telemetryPlan({ OTEL_EXPORTER_OTLP_ENDPOINT: "http://127.0.0.1:4318" }).plan?.traces // { protocol: "http/protobuf", origin: "http://127.0.0.1:4318" }
 */
export function telemetryPlan(env: Env): { plan?: TelemetryPlan; problems: string[] } {
  if (set(env.OTEL_SDK_DISABLED)?.toLowerCase() === "true") return { problems: [] };
  const traces = signal(env, "TRACES");
  const metrics = signal(env, "METRICS");
  const problems = [traces, metrics].filter((s): s is string => typeof s === "string");
  if (typeof traces !== "object" && typeof metrics !== "object") return { problems };
  return {
    plan: {
      ...(typeof traces === "object" ? { traces } : {}),
      ...(typeof metrics === "object" ? { metrics } : {}),
      serviceName: set(env.OTEL_SERVICE_NAME) ?? "benefits-sync",
      timeoutMs: positive(set(env.OTEL_EXPORTER_OTLP_TIMEOUT), DEFAULT_EXPORT_TIMEOUT_MS),
      metricIntervalMs: positive(set(env.OTEL_METRIC_EXPORT_INTERVAL), DEFAULT_METRIC_INTERVAL_MS),
    },
    problems,
  };
}

/**
 * The OpenTelemetry SDK, started for one command when an OTLP endpoint is set (otel-env.ts). Only
 * start.ts imports this file, lazily: without the variables none of the SDK's modules is loaded.
 *
 * - Traces: a batch span processor into an OTLP/HTTP exporter (protobuf, or JSON when
 *   `OTEL_EXPORTER_OTLP_PROTOCOL=http/json`); context follows async calls (AsyncLocalStorage), so
 *   a request's span finds its walk's span as its parent.
 * - Metrics: a periodic reader into the same kind of exporter, every `OTEL_METRIC_EXPORT_INTERVAL`
 *   ms and once more at exit.
 * - The resource: `service.name` (`OTEL_SERVICE_NAME`, default `benefits-sync`), `service.version`,
 *   the SDK's own, and `OTEL_RESOURCE_ATTRIBUTES`. No process or host detector: the process's
 *   command line may hold a `--sink postgres://user:password@...`.
 *
 * The exporters read the rest of their settings (headers, certificates, compression) from the
 * standard variables themselves. An export that fails never fails the command: the first failure
 * is told once, as one line naming the endpoint's origin and the error's code (never a message).
 */
import { context, metrics, trace } from "@opentelemetry/api";
import { AsyncLocalStorageContextManager } from "@opentelemetry/context-async-hooks";
import { OTLPMetricExporter as JsonMetricExporter } from "@opentelemetry/exporter-metrics-otlp-http";
import { OTLPMetricExporter as ProtoMetricExporter } from "@opentelemetry/exporter-metrics-otlp-proto";
import { OTLPTraceExporter as JsonTraceExporter } from "@opentelemetry/exporter-trace-otlp-http";
import { OTLPTraceExporter as ProtoTraceExporter } from "@opentelemetry/exporter-trace-otlp-proto";
import { defaultResource, detectResources, envDetector, resourceFromAttributes } from "@opentelemetry/resources";
import { MeterProvider, PeriodicExportingMetricReader, type PushMetricExporter } from "@opentelemetry/sdk-metrics";
import { BasicTracerProvider, BatchSpanProcessor, type SpanExporter } from "@opentelemetry/sdk-trace-base";
import { redact } from "../errors.js";
import type { TelemetryPlan } from "./otel-env.js";

export interface RunningTelemetry {
  /** Export what is left and stop, within the plan's deadline; never throws. */
  shutdown(): Promise<void>;
}

type ExportResult = Parameters<Parameters<SpanExporter["export"]>[1]>[0];

/** The code an export's failure may be told by: a Node.js error code, an HTTP status, or its class. */
function failureCode(error: unknown): string {
  const e = error as { code?: unknown; name?: unknown } | undefined;
  if (typeof e?.code === "string" && /^[A-Z0-9_]{2,40}$/.test(e.code)) return e.code;
  if (typeof e?.code === "number") return `HTTP ${e.code}`;
  return typeof e?.name === "string" && /^\w{1,40}$/.test(e.name) ? e.name : "an error";
}

/** A span exporter that tells `onResult` how each export went. */
function watchedSpans(exporter: SpanExporter, onResult: (r: ExportResult) => void): SpanExporter {
  return {
    export: (spans, done) => exporter.export(spans, (r) => (onResult(r), done(r))),
    shutdown: () => exporter.shutdown(),
    forceFlush: () => exporter.forceFlush?.() ?? Promise.resolve(),
  };
}

/** A metric exporter that tells `onResult` how each export went; its temporality and aggregation are the exporter's. */
function watchedMetrics(exporter: PushMetricExporter, onResult: (r: ExportResult) => void): PushMetricExporter {
  return {
    export: (data, done) => exporter.export(data, (r) => (onResult(r), done(r))),
    forceFlush: () => exporter.forceFlush(),
    shutdown: () => exporter.shutdown(),
    ...(exporter.selectAggregationTemporality ? { selectAggregationTemporality: exporter.selectAggregationTemporality.bind(exporter) } : {}),
    ...(exporter.selectAggregation ? { selectAggregation: exporter.selectAggregation.bind(exporter) } : {}),
  };
}

/**
 * Register the SDK's providers globally for this process and return how to stop them.
 *
 * @example const t = await startOtel(plan, { version: "0.1.0", warn: (l) => process.stderr.write(`${l}\n`) }); ...; await t.shutdown();
 */
export async function startOtel(plan: TelemetryPlan, io: { readonly version: string; readonly warn: (line: string) => void }): Promise<RunningTelemetry> {
  let told = false;
  const tell = (line: string) => {
    if (told) return;
    told = true;
    io.warn(redact(`benefits-sync: telemetry: ${line}; the command goes on without it`));
  };
  const watch = (what: string, origin: string) => (r: ExportResult) => {
    if (r.code !== 0) tell(`could not export ${what} to ${origin} (${failureCode(r.error)})`);
  };
  const detected = detectResources({ detectors: [envDetector] });
  const resource = defaultResource()
    .merge(resourceFromAttributes({ "service.name": plan.serviceName, "service.version": io.version }))
    .merge(detected);
  const exporterOptions = { timeoutMillis: plan.timeoutMs };

  let tracer: BasicTracerProvider | undefined;
  if (plan.traces) {
    const exporter = plan.traces.protocol === "http/json" ? new JsonTraceExporter(exporterOptions) : new ProtoTraceExporter(exporterOptions);
    const processor = new BatchSpanProcessor(watchedSpans(exporter, watch("traces", plan.traces.origin)), { exportTimeoutMillis: plan.timeoutMs });
    tracer = new BasicTracerProvider({ resource, spanProcessors: [processor] });
    context.setGlobalContextManager(new AsyncLocalStorageContextManager().enable());
    trace.setGlobalTracerProvider(tracer);
  }
  let meter: MeterProvider | undefined;
  if (plan.metrics) {
    const exporter = plan.metrics.protocol === "http/json" ? new JsonMetricExporter(exporterOptions) : new ProtoMetricExporter(exporterOptions);
    const reader = new PeriodicExportingMetricReader({
      exporter: watchedMetrics(exporter, watch("metrics", plan.metrics.origin)),
      exportIntervalMillis: plan.metricIntervalMs,
      exportTimeoutMillis: Math.min(plan.timeoutMs, plan.metricIntervalMs),
    });
    meter = new MeterProvider({ resource, readers: [reader] });
    metrics.setGlobalMeterProvider(meter);
  }
  const origin = plan.traces?.origin ?? plan.metrics?.origin ?? "";
  return {
    async shutdown() {
      const stopped = Promise.allSettled([tracer?.shutdown(), meter?.shutdown()]).then(() => true);
      let timer: NodeJS.Timeout | undefined;
      const late = new Promise<false>((resolve) => (timer = setTimeout(() => resolve(false), plan.timeoutMs + 500)));
      const inTime = await Promise.race([stopped, late]);
      clearTimeout(timer);
      if (!inTime) tell(`the last export to ${origin} did not end within ${plan.timeoutMs} ms`);
      // Unregistered, so that the next command in this process (tests) may start its own.
      trace.disable();
      metrics.disable();
      context.disable();
    },
  };
}

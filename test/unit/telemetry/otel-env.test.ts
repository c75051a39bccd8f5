/**
 * When OpenTelemetry is on: only when an OTLP endpoint is set, never when the SDK is disabled or
 * a signal's exporter is `none`; and what a warning may name of the endpoint (its origin).
 */
import { describe, expect, it } from "vitest";
import { DEFAULT_EXPORT_TIMEOUT_MS, telemetryPlan } from "../../../src/telemetry/otel-env.js";

const E = "http://user:secret@collector.test:4318/otlp?token=abc";

describe("telemetryPlan", () => {
  it("is off with no OTLP endpoint, whatever else is set", () => {
    expect(telemetryPlan({})).toEqual({ problems: [] });
    expect(telemetryPlan({ OTEL_SERVICE_NAME: "x", OTEL_EXPORTER_OTLP_HEADERS: "a=b", OTEL_EXPORTER_OTLP_PROTOCOL: "http/json", OTEL_EXPORTER_OTLP_ENDPOINT: " " })).toEqual({ problems: [] });
  });

  it("turns both signals on for the generic endpoint, one for a signal's own; origin only, protobuf by default", () => {
    const both = telemetryPlan({ OTEL_EXPORTER_OTLP_ENDPOINT: E }).plan!;
    expect(both.traces).toEqual({ protocol: "http/protobuf", origin: "http://collector.test:4318" });
    expect(both.metrics).toEqual(both.traces);
    expect(both).toMatchObject({ serviceName: "benefits-sync", timeoutMs: DEFAULT_EXPORT_TIMEOUT_MS, metricIntervalMs: 60_000 });
    const traces = telemetryPlan({ OTEL_EXPORTER_OTLP_TRACES_ENDPOINT: "http://t.test/v1/traces" }).plan!;
    expect([traces.traces?.origin, traces.metrics]).toEqual(["http://t.test", undefined]);
    const metrics = telemetryPlan({ OTEL_EXPORTER_OTLP_METRICS_ENDPOINT: "https://m.test/v1/metrics", OTEL_EXPORTER_OTLP_METRICS_PROTOCOL: "http/json" }).plan!;
    expect([metrics.traces, metrics.metrics]).toEqual([undefined, { protocol: "http/json", origin: "https://m.test" }]);
  });

  it("honours OTEL_SDK_DISABLED, OTEL_*_EXPORTER=none, the service name, the timeout and the interval", () => {
    expect(telemetryPlan({ OTEL_EXPORTER_OTLP_ENDPOINT: E, OTEL_SDK_DISABLED: "true" }).plan).toBeUndefined();
    expect(telemetryPlan({ OTEL_EXPORTER_OTLP_ENDPOINT: E, OTEL_SDK_DISABLED: "false" }).plan).toBeDefined();
    const p = telemetryPlan({ OTEL_EXPORTER_OTLP_ENDPOINT: E, OTEL_TRACES_EXPORTER: "none", OTEL_SERVICE_NAME: "nightly", OTEL_EXPORTER_OTLP_TIMEOUT: "1500", OTEL_METRIC_EXPORT_INTERVAL: "10000" }).plan!;
    expect(p).toEqual({ metrics: { protocol: "http/protobuf", origin: "http://collector.test:4318" }, serviceName: "nightly", timeoutMs: 1500, metricIntervalMs: 10_000 });
    expect(telemetryPlan({ OTEL_EXPORTER_OTLP_ENDPOINT: E, OTEL_TRACES_EXPORTER: "none", OTEL_METRICS_EXPORTER: "none" }).plan).toBeUndefined();
    expect(telemetryPlan({ OTEL_EXPORTER_OTLP_ENDPOINT: E, OTEL_EXPORTER_OTLP_TIMEOUT: "soon" }).plan!.timeoutMs).toBe(DEFAULT_EXPORT_TIMEOUT_MS);
  });

  it("says why an endpoint it cannot use is not used, without the endpoint's secrets", () => {
    const grpc = telemetryPlan({ OTEL_EXPORTER_OTLP_ENDPOINT: E, OTEL_EXPORTER_OTLP_PROTOCOL: "grpc" });
    expect(grpc.plan).toBeUndefined();
    expect(grpc.problems).toHaveLength(2);
    expect(grpc.problems[0]).toMatch(/"grpc" is not supported \(http\/protobuf or http\/json\): traces are not exported/);
    const bad = telemetryPlan({ OTEL_EXPORTER_OTLP_TRACES_ENDPOINT: "collector:4318 token=abc", OTEL_EXPORTER_OTLP_METRICS_ENDPOINT: "http://ok.test" });
    expect(bad.plan?.metrics?.origin).toBe("http://ok.test");
    expect(bad.problems).toEqual(["the OTLP traces endpoint is not an http(s) URL: traces are not exported"]);
    expect(JSON.stringify([grpc, bad])).not.toMatch(/secret|token/);
  });
});

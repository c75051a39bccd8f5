/**
 * A loopback OTLP/HTTP receiver, as a collector listens: `POST /v1/traces` and `POST /v1/metrics`,
 * answered 200 with an empty export response. Each body is decoded with the protocol's own
 * definitions (test/fixtures/otlp-proto, loaded by protobufjs), never with the SDK's serialiser;
 * an `application/json` body (OTEL_EXPORTER_OTLP_PROTOCOL=http/json) is the OTLP JSON mapping.
 * Every body is also kept as received, so a scan can read bytes no decoder looked at.
 */
import { createServer, type IncomingMessage } from "node:http";
import type { AddressInfo } from "node:net";
import { dirname, join } from "node:path";
import { fileURLToPath } from "node:url";
import { gunzipSync } from "node:zlib";
import protobuf from "protobufjs";

const PROTO_DIR = join(dirname(fileURLToPath(import.meta.url)), "..", "fixtures", "otlp-proto");

function loadRoot(): protobuf.Root {
  const root = new protobuf.Root();
  root.resolvePath = (_origin, target) => join(PROTO_DIR, target);
  return root.loadSync(["opentelemetry/proto/collector/trace/v1/trace_service.proto", "opentelemetry/proto/collector/metrics/v1/metrics_service.proto"], { keepCase: false });
}

const root = loadRoot();
const TraceRequest = root.lookupType("opentelemetry.proto.collector.trace.v1.ExportTraceServiceRequest");
const MetricsRequest = root.lookupType("opentelemetry.proto.collector.metrics.v1.ExportMetricsServiceRequest");

export type Attrs = Record<string, unknown>;

export interface ReceivedSpan {
  readonly traceId: string;
  readonly spanId: string;
  /** "" for a root span. */
  readonly parentSpanId: string;
  readonly name: string;
  /** OTLP's SpanKind number: 1 internal, 3 client. */
  readonly kind: number;
  readonly attributes: Attrs;
  readonly events: { readonly name: string; readonly attributes: Attrs }[];
  readonly status: { readonly code: number; readonly message: string };
  readonly resource: Attrs;
  readonly scope: string;
}

export interface ReceivedPoint {
  readonly attributes: Attrs;
  /** A sum's value, or a histogram's count. */
  readonly value: number;
  readonly sum?: number;
  readonly bounds?: number[];
}

export interface ReceivedMetric {
  readonly name: string;
  readonly unit: string;
  readonly description: string;
  readonly type: "sum" | "gauge" | "histogram" | "other";
  readonly points: ReceivedPoint[];
  readonly resource: Attrs;
}

export interface OtlpReceiver {
  /** `http://127.0.0.1:PORT`: the value of OTEL_EXPORTER_OTLP_ENDPOINT. */
  readonly url: string;
  readonly spans: ReceivedSpan[];
  readonly metrics: ReceivedMetric[];
  /** Every request as it came: path, content type, headers and the body's bytes (unzipped). */
  readonly requests: { readonly path: string; readonly contentType: string; readonly headers: IncomingMessage["headers"]; readonly body: Buffer }[];
  close(): Promise<void>;
}

/** An OTLP AnyValue (decoded object or JSON) as a plain value. */
function anyValue(v: Record<string, unknown> | undefined): unknown {
  if (!v) return undefined;
  if ("stringValue" in v) return v.stringValue;
  if ("boolValue" in v) return v.boolValue;
  if ("intValue" in v) return Number(v.intValue);
  if ("doubleValue" in v) return Number(v.doubleValue);
  if ("arrayValue" in v) return ((v.arrayValue as { values?: Record<string, unknown>[] }).values ?? []).map(anyValue);
  if ("kvlistValue" in v) return attrs((v.kvlistValue as { values?: KeyValue[] }).values);
  if ("bytesValue" in v) return v.bytesValue;
  return undefined;
}

type KeyValue = { key: string; value?: Record<string, unknown> };
const attrs = (list: KeyValue[] | undefined): Attrs => Object.fromEntries((list ?? []).map((kv) => [kv.key, anyValue(kv.value)]));

/** An id as hex: protobuf gives bytes (base64 through toObject), JSON gives hex already. */
const hexId = (id: unknown, json: boolean): string => (typeof id !== "string" || id === "" ? "" : json ? id.toLowerCase() : Buffer.from(id, "base64").toString("hex"));

function decode(path: string, contentType: string, body: Buffer): Record<string, unknown> {
  const json = contentType.includes("json");
  if (json) return JSON.parse(body.toString("utf8")) as Record<string, unknown>;
  const type = path === "/v1/traces" ? TraceRequest : MetricsRequest;
  return type.toObject(type.decode(body), { longs: String, bytes: String, enums: Number, defaults: false, arrays: true, oneofs: false });
}

function spansOf(req: Record<string, unknown>, json: boolean): ReceivedSpan[] {
  const out: ReceivedSpan[] = [];
  for (const rs of (req.resourceSpans ?? []) as Record<string, unknown>[]) {
    const resource = attrs((rs.resource as { attributes?: KeyValue[] } | undefined)?.attributes);
    for (const ss of (rs.scopeSpans ?? []) as Record<string, unknown>[]) {
      const scope = (ss.scope as { name?: string } | undefined)?.name ?? "";
      for (const s of (ss.spans ?? []) as Record<string, unknown>[]) {
        const st = (s.status ?? {}) as { code?: number; message?: string };
        out.push({
          traceId: hexId(s.traceId, json),
          spanId: hexId(s.spanId, json),
          parentSpanId: hexId(s.parentSpanId, json),
          name: String(s.name),
          kind: Number(s.kind ?? 0),
          attributes: attrs(s.attributes as KeyValue[]),
          events: ((s.events ?? []) as { name: string; attributes?: KeyValue[] }[]).map((e) => ({ name: e.name, attributes: attrs(e.attributes) })),
          status: { code: Number(st.code ?? 0), message: st.message ?? "" },
          resource,
          scope,
        });
      }
    }
  }
  return out;
}

function metricsOf(req: Record<string, unknown>): ReceivedMetric[] {
  const out: ReceivedMetric[] = [];
  for (const rm of (req.resourceMetrics ?? []) as Record<string, unknown>[]) {
    const resource = attrs((rm.resource as { attributes?: KeyValue[] } | undefined)?.attributes);
    for (const sm of (rm.scopeMetrics ?? []) as Record<string, unknown>[]) {
      for (const m of (sm.metrics ?? []) as Record<string, unknown>[]) {
        const type = m.sum ? "sum" : m.gauge ? "gauge" : m.histogram ? "histogram" : "other";
        const data = (m.sum ?? m.gauge ?? m.histogram ?? {}) as { dataPoints?: Record<string, unknown>[] };
        const points = (data.dataPoints ?? []).map((p) => ({
          attributes: attrs(p.attributes as KeyValue[]),
          value: Number(type === "histogram" ? p.count : (p.asInt ?? p.asDouble ?? 0)),
          ...(type === "histogram" ? { sum: Number(p.sum ?? 0), bounds: ((p.explicitBounds ?? []) as unknown[]).map(Number) } : {}),
        }));
        out.push({ name: String(m.name), unit: String(m.unit ?? ""), description: String(m.description ?? ""), type, points, resource });
      }
    }
  }
  return out;
}

const read = (req: IncomingMessage): Promise<Buffer> =>
  new Promise((resolve, reject) => {
    const chunks: Buffer[] = [];
    req.on("data", (c: Buffer) => chunks.push(c));
    req.once("end", () => resolve(Buffer.concat(chunks)));
    req.once("error", reject);
  });

/** Listen on 127.0.0.1, a port of the system's choosing. */
export async function startOtlpReceiver(): Promise<OtlpReceiver> {
  const spans: ReceivedSpan[] = [];
  const metrics: ReceivedMetric[] = [];
  const requests: OtlpReceiver["requests"] = [];
  const server = createServer((req, res) => {
    void read(req).then((raw) => {
      const path = (req.url ?? "").split("?")[0]!;
      const contentType = String(req.headers["content-type"] ?? "");
      if (req.method !== "POST" || (path !== "/v1/traces" && path !== "/v1/metrics")) {
        res.writeHead(404).end();
        return;
      }
      const body = req.headers["content-encoding"] === "gzip" ? gunzipSync(raw) : raw;
      requests.push({ path, contentType, headers: req.headers, body });
      const decoded = decode(path, contentType, body);
      if (path === "/v1/traces") spans.push(...spansOf(decoded, contentType.includes("json")));
      else metrics.push(...metricsOf(decoded));
      // An empty ExportTraceServiceResponse / ExportMetricsServiceResponse: zero bytes, or `{}`.
      res.writeHead(200, { "content-type": contentType.includes("json") ? "application/json" : "application/x-protobuf" }).end(contentType.includes("json") ? "{}" : "");
    });
  });
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  const { port } = server.address() as AddressInfo;
  return {
    url: `http://127.0.0.1:${port}`,
    spans,
    metrics,
    requests,
    close: () =>
      new Promise<void>((resolve) => {
        server.close(() => resolve());
        server.closeAllConnections();
      }),
  };
}

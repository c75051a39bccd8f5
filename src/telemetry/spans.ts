/**
 * The spans of benefits-sync, through the OpenTelemetry API only: without an SDK registered (the
 * CLI registers one only when an OTLP endpoint is set, see start.ts) every call here is the API's
 * no-op, and an application that registers its own SDK gets these spans in its traces.
 *
 * What a span may carry is decided here and nowhere else: ids of runs and groups, names of jobs,
 * resources and outputs, counts, durations, HTTP methods, route templates and status codes. An
 * error is told by its class or code (`error.type`), never by its message: a message may quote a
 * service's answer, and answers carry people. docs/metrics.md lists every span and attribute.
 */
import { SpanKind, SpanStatusCode, context, trace, type Attributes, type Span } from "@opentelemetry/api";

/** The names of the spans, one per unit of work (docs/metrics.md, "OpenTelemetry"). */
export const SpanNames = {
  /** One run of a sync job: the walks, the run's record, the deliveries. */
  run: "benefits_sync.run",
  /** One walk of a scope: a listing (a resource, or a resource of one group), or a lookup. */
  walk: "benefits_sync.walk",
  /** One output receiving what it has not received. */
  deliver: "benefits_sync.deliver",
  /** One batch of the webhook worker: members refetched and applied, as one run. */
  apply: "benefits_sync.webhooks.apply",
} as const;

/** The attributes of our own (a namespace of ours, as the semantic conventions ask). */
export const Attr = {
  job: "benefits_sync.job",
  runId: "benefits_sync.run.id",
  runStatus: "benefits_sync.run.status",
  dryRun: "benefits_sync.run.dry_run",
  resumedFrom: "benefits_sync.run.resumed_from",
  resources: "benefits_sync.run.resources",
  resource: "benefits_sync.resource",
  groupId: "benefits_sync.group.id",
  lookup: "benefits_sync.walk.lookup",
  pages: "benefits_sync.walk.pages",
  records: "benefits_sync.walk.records",
  outputKind: "benefits_sync.output.kind",
  outputName: "benefits_sync.output.name",
  outputFormat: "benefits_sync.output.format",
  outputStatus: "benefits_sync.output.status",
  outputRuns: "benefits_sync.output.runs",
  members: "benefits_sync.webhooks.members",
  applied: "benefits_sync.webhooks.events_applied",
  retrying: "benefits_sync.webhooks.events_retrying",
  parked: "benefits_sync.webhooks.events_parked",
  /** The semantic conventions' own. */
  errorType: "error.type",
} as const;

const tracer = () => trace.getTracer("benefits-sync");

/** An error as a span may name it: its stable code, else its class; never its message. */
export function errorType(e: unknown): string {
  const code = e !== null && typeof e === "object" ? (e as { code?: unknown }).code : undefined;
  if (typeof code === "string" && /^[A-Za-z0-9_.-]{1,64}$/.test(code)) return code;
  if (typeof code === "number") return String(code);
  return e instanceof Error ? e.name : "Error";
}

/** Mark `span` failed with `type` (a code or a class), and no free text. */
export function markFailed(span: Span, type: string): void {
  span.setAttribute(Attr.errorType, type);
  span.setStatus({ code: SpanStatusCode.ERROR });
}

export interface SpanOptions<T> {
  readonly kind?: SpanKind;
  /**
   * When the span's work ends later than `fn` resolves (a walk whose pages the store applies
   * after the last fetch): the span ends when this settles, and fails if it rejects.
   */
  readonly until?: (result: T) => Promise<unknown>;
}

/**
 * Run `fn` inside a new span, the current one its parent; the span ends when `fn` settles (or
 * `until`), failed by `errorType` if it throws.
 *
 * @example const n = await inSpan(SpanNames.walk, { [Attr.resource]: "designs" }, async (span) => walk());
 */
export function inSpan<T>(name: string, attributes: Attributes, fn: (span: Span) => Promise<T>, opts: SpanOptions<T> = {}): Promise<T> {
  return tracer().startActiveSpan(name, { kind: opts.kind ?? SpanKind.INTERNAL, attributes }, async (span) => {
    let result: T;
    try {
      result = await fn(span);
    } catch (e) {
      markFailed(span, errorType(e));
      span.end();
      throw e;
    }
    const later = opts.until?.(result);
    if (later === undefined) span.end();
    else later.then(() => span.end(), (e: unknown) => (markFailed(span, errorType(e)), span.end()));
    return result;
  });
}

/** Set attributes on the span of the current context, if it records (a walk's counts as it ends). */
export function setActiveAttributes(attributes: Attributes): void {
  const span = trace.getSpan(context.active());
  if (span?.isRecording()) span.setAttributes(attributes);
}

export { SpanKind };

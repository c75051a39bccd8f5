/**
 * Where a run's deltas go: folders (`--out DIR [--format F]`), warehouses (`--sink URL`), and the
 * sinks named in the config file (`sinks`). `sync` delivers to each of them after a successful
 * run, each through the ledger on its own: one output failing does not hold back another.
 */
import type { Database } from "better-sqlite3";
import { resolve } from "node:path";
import { ConfigError } from "../errors.js";
import { folderOutput, type FileFormatName } from "./files/folder-sink.js";
import { folderPermissions, type FolderPermissions } from "./files/folder-permissions.js";
import type { LayoutName } from "./files/table-layout.js";
import type { DeliveryOutcome } from "./ledger.js";
import { deliverToSink, type Sink } from "./sink.js";
import { isS3Url, parseS3Url, s3Output, s3Url, type S3Options } from "./s3/s3-target.js";
import { Attr, inSpan, markFailed, SpanNames } from "../telemetry/spans.js";

export type OutputSpec =
  | {
      readonly kind: "folder";
      readonly dir: string;
      readonly format: FileFormatName;
      /** Run folders (absent) or tables (files/table-layout.ts). */
      readonly layout?: LayoutName;
      readonly name?: string;
      readonly fromRun?: number;
      readonly perms?: FolderPermissions;
    }
  | { readonly kind: "postgres"; readonly url: string; readonly name?: string; readonly fromRun?: number }
  | ({ readonly kind: "s3"; readonly url: string; readonly format: FileFormatName; readonly layout?: LayoutName; readonly name?: string; readonly fromRun?: number } & S3Options);

/** One output's delivery after a run. */
export interface OutputDelivery {
  readonly spec: OutputSpec;
  /** Where it went, for people (a directory, or the warehouse without its password). */
  readonly target: string;
  readonly outcome: DeliveryOutcome<unknown>;
}

/** The sink of `spec`; `signal` stops an S3 delivery in flight (the other sinks finish theirs). */
export async function sinkFor(spec: OutputSpec, signal?: AbortSignal): Promise<Sink<unknown>> {
  if (spec.kind === "postgres") return (await import("./postgres/postgres-sink.js")).postgresSink(spec.url);
  const { fileFormat, tablesFormat } = await import("./files/formats.js");
  if (spec.kind === "s3") {
    const { url, format, name, fromRun, kind, layout, ...opts } = spec;
    const target = parseS3Url(url, name ? `sinks.${name}.url` : "--out");
    const withStop = { ...opts, signal };
    if (layout === "tables") return (await import("./s3/s3-tables-sink.js")).s3TablesSink(target, await tablesFormat(), withStop);
    return (await import("./s3/s3-sink.js")).s3Sink(target, await fileFormat(format), withStop);
  }
  const { folderSink } = await import("./files/folder-sink.js");
  if (spec.layout === "tables") return (await import("./files/tables-sink.js")).tablesSink(resolve(spec.dir), await tablesFormat(), spec.perms);
  return folderSink(resolve(spec.dir), await fileFormat(spec.format), spec.perms);
}

/** Parse `--sink VALUE`: a postgres:// URL, or the name of a sink in the config file. */
export function sinkSpec(value: string, named: Readonly<Record<string, OutputSpec>>): OutputSpec {
  if (/^postgres(ql)?:\/\//.test(value)) return { kind: "postgres", url: value };
  const spec = named[value];
  if (spec) return spec;
  const names = Object.keys(named);
  throw new ConfigError([
    `--sink ${value}: not a postgres:// URL, and no sink by that name in the config file${names.length ? ` (it names ${names.join(", ")})` : " (it names none)"}`,
  ]);
}

/**
 * Deliver to each output in turn, each in a span of its own; never throws (each outcome says how
 * it went). Once `signal` is aborted (SIGINT, SIGTERM), an S3 delivery in flight stops and the
 * outputs not reached are not begun: each stays pending for the next run.
 */
export async function deliverAll(db: Database, specs: readonly OutputSpec[], forRun: number, opts: { readonly now?: () => Date; readonly signal?: AbortSignal } = {}): Promise<OutputDelivery[]> {
  const { now, signal } = opts;
  const out: OutputDelivery[] = [];
  for (const spec of specs) {
    if (signal?.aborted) break;
    // Named by its kind, format and configured name: never its path or URL (a URL may hold a password).
    const shown = { [Attr.outputKind]: spec.kind, [Attr.runId]: forRun, ...(spec.kind !== "postgres" ? { [Attr.outputFormat]: spec.format } : {}), ...(spec.name ? { [Attr.outputName]: spec.name } : {}) };
    out.push(
      await inSpan(SpanNames.deliver, shown, async (span) => {
        const delivery = await deliverOne(db, spec, forRun, now, signal);
        const o = delivery.outcome;
        span.setAttributes({ [Attr.outputStatus]: o.status, [Attr.outputRuns]: o.runs.length });
        if (o.status === "failed") markFailed(span, o.error?.code ?? "DELIVERY");
        return delivery;
      }),
    );
  }
  return out;
}

async function deliverOne(db: Database, spec: OutputSpec, forRun: number, now: (() => Date) | undefined, signal: AbortSignal | undefined): Promise<OutputDelivery> {
  let sink: Sink<unknown>;
  try {
    sink = await sinkFor(spec, signal);
  } catch (e) {
    const message = e instanceof ConfigError ? e.problems.join("; ") : e instanceof Error ? e.message : String(e);
    return { spec, target: targetOf(spec), outcome: { status: "failed", runs: [], error: { code: "CONFIG", message } } };
  }
  return { spec, target: spec.kind === "postgres" ? sink.describe : targetOf(spec), outcome: await deliverToSink(db, sink, forRun, now, spec.fromRun) };
}

/** Where an output goes, for people, before its sink is made. */
const targetOf = (spec: OutputSpec): string => (spec.kind === "folder" ? resolve(spec.dir) : spec.kind === "s3" ? spec.url : "(warehouse)");

/**
 * `--out VALUE [--format F]`: a folder (relative to `cwd`), or an `s3://bucket/prefix` reached
 * with the AWS environment's settings (AWS_REGION, AWS_ENDPOINT_URL_S3; a configured s3 sink has
 * every option). A ConfigError for a malformed s3:// URL.
 */
export function outSpec(value: string, format: FileFormatName, cwd: string, layout: LayoutName = "folder"): OutputSpec {
  const tables = layout === "tables" ? { layout } : {};
  if (!isS3Url(value)) return { kind: "folder", dir: resolve(cwd, value), format, ...tables };
  return { kind: "s3", url: s3Url(parseS3Url(value, "--out")), format, ...tables };
}

/** An output's identity in the ledger, before its sink is made (a folder's `csv:/abs/dir`, an S3 prefix's `csv:s3://bucket/prefix`). */
export function outputId(spec: OutputSpec): string {
  if (spec.kind === "folder") return folderOutput(spec.format, spec.dir, spec.layout);
  if (spec.kind === "s3") return s3Output(spec.format, parseS3Url(spec.url, "--out"), spec.layout);
  throw new Error("outputId: a warehouse's identity comes from its URL (postgresSink)");
}

/** The sinks named in the config file, with `urlEnv` read from `env` (a ConfigError when it is unset). */
export function configuredOutputs(
  sinks: Readonly<
    Record<
      string,
      | {
          readonly type: "folder";
          readonly dir: string;
          readonly format: FileFormatName;
          readonly layout?: LayoutName | undefined;
          readonly fromRun?: number | undefined;
          readonly mode?: string | undefined;
          readonly group?: string | number | undefined;
        }
      | { readonly type: "postgres"; readonly url?: string | undefined; readonly urlEnv?: string | undefined; readonly fromRun?: number | undefined }
      | ({ readonly type: "s3"; readonly url: string; readonly format: FileFormatName; readonly layout?: LayoutName | undefined; readonly fromRun?: number | undefined } & {
          readonly [K in keyof S3Options]?: S3Options[K] | undefined;
        })
    >
  >,
  env: Readonly<Record<string, string | undefined>>,
  cwd: string,
): Record<string, OutputSpec> {
  const out: Record<string, OutputSpec> = {};
  const problems: string[] = [];
  for (const [name, s] of Object.entries(sinks)) {
    const start = s.fromRun !== undefined ? { fromRun: s.fromRun } : {};
    if (s.type === "folder") {
      try {
        const perms = folderPermissions(name, s.mode, s.group);
        if (s.layout === "tables" && s.format !== "parquet") {
          problems.push(`sinks.${name}.layout: the table layout is written as Parquet, not ${s.format}; add "format": "parquet" (or leave "layout" out for run folders)`);
          continue;
        }
        const layout = s.layout === "tables" ? { layout: s.layout } : {};
        out[name] = { kind: "folder", dir: resolve(cwd, s.dir), format: s.format, ...layout, name, ...start, ...(Object.keys(perms).length ? { perms } : {}) };
      } catch (e) {
        if (!(e instanceof ConfigError)) throw e;
        problems.push(...e.problems);
      }
      continue;
    }
    if (s.type === "s3") {
      if (s.layout === "tables" && s.format !== "parquet") {
        problems.push(`sinks.${name}.layout: the table layout is written as Parquet, not ${s.format}; add "format": "parquet" (or leave "layout" out for run folders)`);
        continue;
      }
      try {
        const { type, url, ...rest } = s;
        const opts = Object.fromEntries(Object.entries(rest).filter(([, v]) => v !== undefined));
        out[name] = { kind: "s3", ...opts, url: s3Url(parseS3Url(url, `sinks.${name}.url`)), format: s.format, name, ...start };
      } catch (e) {
        if (!(e instanceof ConfigError)) throw e;
        problems.push(...e.problems);
      }
      continue;
    }
    const url = s.url ?? (s.urlEnv ? env[s.urlEnv] : undefined);
    if (!url) problems.push(`sinks.${name}.urlEnv: the environment variable ${s.urlEnv} is not set; set it to the warehouse's postgres:// URL`);
    else if (!/^postgres(ql)?:\/\//.test(url)) problems.push(`sinks.${name}.urlEnv: ${s.urlEnv} does not hold a postgres:// URL`);
    else out[name] = { kind: "postgres", url, name, ...start };
  }
  if (problems.length) throw new ConfigError(problems);
  return out;
}

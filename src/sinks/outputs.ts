/**
 * Where a run's deltas go: folders (`--out DIR [--format F]`), warehouses (`--sink URL`), and the
 * sinks named in the config file (`sinks`). `sync` delivers to each of them after a successful
 * run, each through the ledger on its own: one output failing does not hold back another.
 */
import type { Database } from "better-sqlite3";
import { resolve } from "node:path";
import { ConfigError } from "../errors.js";
import type { FileFormatName } from "./files/folder-sink.js";
import { folderPermissions, type FolderPermissions } from "./files/folder-permissions.js";
import type { LayoutName } from "./files/table-layout.js";
import type { DeliveryOutcome } from "./ledger.js";
import { deliverToSink, type Sink } from "./sink.js";

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
  | { readonly kind: "postgres"; readonly url: string; readonly name?: string; readonly fromRun?: number };

/** One output's delivery after a run. */
export interface OutputDelivery {
  readonly spec: OutputSpec;
  /** Where it went, for people (a directory, or the warehouse without its password). */
  readonly target: string;
  readonly outcome: DeliveryOutcome<unknown>;
}

export async function sinkFor(spec: OutputSpec): Promise<Sink<unknown>> {
  if (spec.kind === "postgres") return (await import("./postgres/postgres-sink.js")).postgresSink(spec.url);
  const { folderSink } = await import("./files/folder-sink.js");
  const { fileFormat, tablesFormat } = await import("./files/formats.js");
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

/** Deliver to each output in turn; never throws (each outcome says how it went). */
export async function deliverAll(db: Database, specs: readonly OutputSpec[], forRun: number, now?: () => Date): Promise<OutputDelivery[]> {
  const out: OutputDelivery[] = [];
  for (const spec of specs) {
    let sink: Sink<unknown>;
    try {
      sink = await sinkFor(spec);
    } catch (e) {
      const message = e instanceof ConfigError ? e.problems.join("; ") : e instanceof Error ? e.message : String(e);
      out.push({ spec, target: spec.kind === "folder" ? resolve(spec.dir) : "(warehouse)", outcome: { status: "failed", runs: [], error: { code: "CONFIG", message } } });
      continue;
    }
    out.push({ spec, target: spec.kind === "folder" ? resolve(spec.dir) : sink.describe, outcome: await deliverToSink(db, sink, forRun, now, spec.fromRun) });
  }
  return out;
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
    const url = s.url ?? (s.urlEnv ? env[s.urlEnv] : undefined);
    if (!url) problems.push(`sinks.${name}.urlEnv: the environment variable ${s.urlEnv} is not set; set it to the warehouse's postgres:// URL`);
    else if (!/^postgres(ql)?:\/\//.test(url)) problems.push(`sinks.${name}.urlEnv: ${s.urlEnv} does not hold a postgres:// URL`);
    else out[name] = { kind: "postgres", url, name, ...start };
  }
  if (problems.length) throw new ConfigError(problems);
  return out;
}

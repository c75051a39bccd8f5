/**
 * The one check of a configuration, made at load by every command and by `config check`: the
 * schema (`loadConfig`), the jobs as configured (names, schedules, time zones, their sinks:
 * `effectiveJobs`), the sinks (a `urlEnv` that is set: `configuredOutputs`), notify's `urlEnv`, and each configured
 * sink's `fromRun` against the snapshot (output-start.ts). It exists because each command used to
 * check a part: `sync` ran with a job name `jobs` refused, and a sink's start that contradicted
 * the snapshot failed only at delivery, after the run.
 */
import { existsSync } from "node:fs";
import path from "node:path";
import { DEFAULT_CONFIG_FILE, readConfig, type Config, type LoadConfigOptions } from "../config/index.js";
import { ConfigError } from "../errors.js";
import { notifyUrl } from "../jobs/notify.js";
import { effectiveJobs } from "../jobs/registry.js";
import { folderDescribe, folderOutput } from "../sinks/files/folder-sink.js";
import { checkFromRun, needsStart, sinkStartKey } from "../sinks/output-start.js";
import { configuredOutputs, type OutputSpec } from "../sinks/outputs.js";
import { parseWarehouseUrl } from "../sinks/postgres/connection.js";
import { openDatabase } from "../store/file/database.js";

export type CheckOptions = LoadConfigOptions & {
  readonly env: Readonly<Record<string, string | undefined>>;
  readonly cwd: string;
  /**
   * Check the sinks too (their `urlEnv` set, their `fromRun`): false for a command that delivers
   * nothing (`runs`, `doctor`, `reconcile`...), which an analyst runs without the warehouse's password.
   */
  readonly sinks?: boolean;
};

export type ConfigCheck = { readonly ok: true; readonly config: Config } | { readonly ok: false; readonly problems: readonly string[] };

/**
 * Every problem of the configuration that `opts` names, or the configuration. Problems with a key
 * the config file sets end with `(from the config file NAME)`, as the schema's own do.
 *
 * @example
 * const check = checkConfig({ env: process.env, cwd: process.cwd() });
 * if (!check.ok) for (const p of check.problems) console.error(p);
 */
export function checkConfig(opts: CheckOptions): ConfigCheck {
  // With problems in the schema, the checks below still run on the rest (the keys it refused left
  // out), so that every problem is reported at once; none without a configuration to check.
  const read = readConfig(opts);
  const problems: string[] = [...read.problems];
  if (!read.config) return { ok: false, problems };
  const config = read.config;
  const display = opts.configPath ?? DEFAULT_CONFIG_FILE;
  const fromFile = existsSync(path.resolve(opts.cwd, display)) ? ` (from the config file ${display})` : "";
  const collect = (check: () => void) => {
    try {
      check();
    } catch (err) {
      if (!(err instanceof ConfigError)) throw err;
      problems.push(...err.problems.map((p) => (/^(jobs|sinks|notify)\./.test(p) ? `${p}${fromFile}` : p)));
    }
  };
  collect(() => effectiveJobs(config));
  if (opts.sinks === false) return problems.length > 0 ? { ok: false, problems } : { ok: true, config };
  let outputs: Record<string, OutputSpec> = {};
  collect(() => (outputs = configuredOutputs(config.sinks, opts.env, opts.cwd)));
  // Told after a run, as the sinks are: the commands that run jobs check it, with them.
  collect(() => notifyUrl(config.notify, opts.env));
  collect(() => checkStarts(config.db, outputs, collect));
  return problems.length > 0 ? { ok: false, problems } : { ok: true, config };
}

/** {@link checkConfig}, throwing its problems as one ConfigError (exit 2). */
export function loadCheckedConfig(opts: CheckOptions): Config {
  const check = checkConfig(opts);
  if (!check.ok) throw new ConfigError(check.problems);
  return check.config;
}

/** Each configured start is a run of the snapshot (or its next one) that no delivery contradicts. */
function checkStarts(db: string, outputs: Readonly<Record<string, OutputSpec>>, collect: (check: () => void) => void): void {
  const started = Object.entries(outputs).filter(([, o]) => o.fromRun !== undefined);
  if (started.length === 0) return;
  const snapshot = db === ":memory:" || !existsSync(db) ? undefined : openDatabase(db, { readonly: true });
  try {
    for (const [name, o] of started) {
      const key = sinkStartKey(name);
      collect(() => {
        checkFromRun(snapshot, o.fromRun!, key);
        if (!snapshot) return;
        const target = o.kind === "folder" ? { output: folderOutput(o.format, o.dir, o.layout), describe: folderDescribe(o.format, o.dir, o.layout) } : parseWarehouseUrl(o.url);
        needsStart(snapshot, target.output, o.fromRun!, target.describe, key);
      });
    }
  } finally {
    snapshot?.close();
  }
}

/** Loading the configuration once, at the edge: file, then environment, then flags. */
import path from "node:path";
import { ConfigError, redact, registerSecret } from "../errors.js";
import { deepFreeze } from "./deep-freeze.js";
import { envLayer } from "./env.js";
import { flagLayer, type ConfigFlags } from "./flags.js";
import { keysAt } from "./known-keys.js";
import { mergeLayers, type Layer } from "./layers.js";
import { remainderOf } from "./config-remainder.js";
import { describeIssues } from "./problems.js";
import { readConfigFile } from "./read-file.js";
import { Config } from "./schema.js";

/** The file read from the working directory when `--config` is not given. */
export const DEFAULT_CONFIG_FILE = "benefits-sync.config.json";

export interface LoadConfigOptions {
  /** Command-line flags, already mapped to configuration keys (`{ db, baseUrl, environment }`). */
  readonly flags?: ConfigFlags;
  readonly env?: Readonly<Record<string, string | undefined>>;
  readonly cwd?: string;
  /** `--config FILE`: when given, the file must exist. */
  readonly configPath?: string | undefined;
}

/**
 * Read `benefits-sync.config.json` (or `configPath`), overlay the `BENEFITS_*` environment
 * variables, then the flags; validate once; return a deep-frozen configuration. Every problem is
 * reported together in one {@link ConfigError} whose `problems` name each bad key, its path and
 * where the value came from. Neither the API key nor the PII key ever appears in a message.
 *
 * @example
 * const config = loadConfig({ flags: { db: "snap.db" }, env: process.env });
 * config.db; // absolute path of snap.db
 */
export function loadConfig(opts: LoadConfigOptions = {}): Config {
  const read = readConfig(opts);
  if (read.problems.length > 0) throw new ConfigError(read.problems);
  return read.config!;
}

/**
 * {@link loadConfig} without throwing: its problems (masked), and the configuration. With problems,
 * `config` is the configuration without the keys they name (when the rest is valid), so that the
 * checks made after the schema (job names, schedules, sinks) still report theirs in the same go:
 * `config check` says every problem at once.
 */
export function readConfig(opts: LoadConfigOptions = {}): { readonly problems: readonly string[]; readonly config: Config | undefined } {
  const env = opts.env ?? process.env;
  const cwd = opts.cwd ?? process.cwd();
  const file = path.resolve(cwd, opts.configPath ?? DEFAULT_CONFIG_FILE);
  const display = opts.configPath ?? DEFAULT_CONFIG_FILE;

  const layers: Layer[] = [];
  const problems: string[] = [];
  const read = readConfigFile(file, { required: opts.configPath !== undefined, display });
  if (read.kind === "problem") problems.push(opts.configPath !== undefined ? `--config ${read.problem}` : read.problem);
  if (read.kind === "ok") layers.push({ data: read.data, labelOf: () => `the config file ${display}` });
  const fromEnv = envLayer(env);
  layers.push(fromEnv, flagLayer(opts.flags ?? {}));

  const merged = mergeLayers(layers);
  // Register before anything can be formatted: even a rejected key must be masked everywhere.
  for (const key of ["apiKey", "piiKey"] as const) {
    const v = merged.input[key];
    if (typeof v === "string") registerSecret(v);
  }
  const secrets = merged.input.webhookSecrets;
  if (Array.isArray(secrets)) for (const s of secrets) if (typeof s === "string") registerSecret(s);
  // A chat webhook's URL is its token (anyone holding it may post): masked like a key.
  const notify = merged.input.notify as { url?: unknown } | undefined;
  if (notify && typeof notify.url === "string") registerSecret(notify.url);

  const result = Config.safeParse(merged.input);
  const known = (p: readonly PropertyKey[]) => keysAt(Config, p);
  let data = result.success ? result.data : undefined;
  if (!result.success) {
    problems.push(...describeIssues(result.error.issues, merged.input, merged.sourceOf, known));
    const rest = remainderOf(Config, merged.input, result.error.issues, known);
    problems.push(...describeIssues(rest.issues, merged.input, merged.sourceOf, (p) => known(rest.meant(p))));
    data = rest.data;
  }
  // Resolved now, against the injected cwd, so later code never depends on process.cwd().
  const config = data && (deepFreeze({ ...data, db: data.db === ":memory:" ? data.db : path.resolve(cwd, data.db) }) as Config);
  // `problems` is public data too (scripts print it): mask it like the message.
  return { problems: problems.map(redact), config };
}

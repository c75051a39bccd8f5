/** Loading the configuration once, at the edge: file, then environment, then flags. */
import path from "node:path";
import { ConfigError, redact, registerSecret } from "../errors.js";
import { deepFreeze } from "./deep-freeze.js";
import { envLayer } from "./env.js";
import { flagLayer, type ConfigFlags } from "./flags.js";
import { keysAt } from "./known-keys.js";
import { mergeLayers, type Layer } from "./layers.js";
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
  if (!result.success) {
    problems.push(...describeIssues(result.error.issues, merged.input, merged.sourceOf, (p) => keysAt(Config, p)));
  }
  // `problems` is public data too (scripts print it): mask it like the message.
  if (problems.length > 0 || !result.success) throw new ConfigError(problems.map(redact));

  // Resolved now, against the injected cwd, so later code never depends on process.cwd().
  const db = result.data.db === ":memory:" ? result.data.db : path.resolve(cwd, result.data.db);
  const config = { ...result.data, db };
  return deepFreeze(config) as Config;
}

/** What a command receives: its options, the global flags, output streams, and lazy configuration. */
import type { Config, ConfigFlags } from "../config/index.js";

/** The slice of a writable stream the CLI uses; tests pass a string collector. */
export interface Output {
  write(chunk: string): unknown;
}

/** Injected I/O, so `main()` runs in-process in tests. */
export interface CliIo {
  readonly stdout: Output;
  readonly stderr: Output;
  readonly env?: Readonly<Record<string, string | undefined>>;
  readonly cwd?: string;
}

/** Flags every command accepts. */
export interface GlobalOptions {
  readonly config?: string;
  readonly db?: string;
  readonly baseUrl?: string;
  readonly env?: string;
  readonly json?: boolean;
  readonly quiet?: boolean;
}

export interface CommandContext {
  /** The command's own options, as commander parsed them (camelCased). */
  readonly options: Readonly<Record<string, unknown>>;
  readonly globals: GlobalOptions;
  readonly stdout: Output;
  readonly stderr: Output;
  readonly env: Readonly<Record<string, string | undefined>>;
  readonly cwd: string;
  /**
   * Load and validate the configuration (file < environment < global flags < `extra`). Throws a
   * ConfigError, which `main` turns into exit status 2. Commands that need no configuration never
   * call it, so a broken config file does not stop `--help` or `sandbox`.
   */
  config(extra?: ConfigFlags): Config;
}

/** A command module: `run` returns the exit status; it never calls `process.exit`. */
export interface CommandModule {
  run(ctx: CommandContext): Promise<number>;
}

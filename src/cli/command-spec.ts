/**
 * The shape of the command table's entries (commands.ts), and options several commands share.
 */
import type { CommandModule } from "./context.js";

export interface OptionSpec {
  /** Commander syntax: `--limit <n>`, `--dry-run`. */
  readonly flags: string;
  readonly description: string;
  /** Parse and check the value at parse time, so a bad value is a usage error (exit 2). */
  readonly parse?: "positiveInt" | "nonNegativeInt" | "date" | "runOrDate" | "list" | "format" | "layout";
}

export interface CommandSpec {
  readonly name: string;
  /** A positional argument (required unless `optional`), given to the command as the option of that name. */
  readonly argument?: { readonly name: string; readonly description: string; readonly optional?: boolean };
  /** One line, shown in the command list. */
  readonly summary: string;
  /** Shown by `benefits-sync <name> --help`; defaults to the summary. */
  readonly description?: string;
  readonly options: readonly OptionSpec[];
  readonly load: () => Promise<CommandModule>;
}

/** `GET /metrics` on a listener of its own (`schedule`, `webhooks serve`; docs/metrics.md). */
export const MetricsOptions: readonly OptionSpec[] = [
  { flags: "--metrics-port <n>", description: "serve GET /metrics (Prometheus) on this port of its own (off unless given; 0: any free port)", parse: "nonNegativeInt" },
  { flags: "--metrics-host <host>", description: "address of the metrics listener (default 127.0.0.1)" },
];

#!/bin/sh
//bin/sh -c : && exec node --max-semi-space-size=4 "$0" "$@"
/**
 * The `benefits-sync` binary. `main(argv, io)` is the whole CLI and returns the exit status, so
 * tests run it in-process; only the last lines of this file touch `process`.
 *
 * Run as a command, the file starts node with the flags of `NodeFlags` (node-flags.ts): `sh` runs
 * the second line (the path `//bin/sh`, then `exec node`, which keeps the process id), and
 * JavaScript reads that line as a comment. `node main.js` runs it without them.
 */
import { realpathSync } from "node:fs";
import { pathToFileURL } from "node:url";
import { CommanderError } from "commander";
import type { Config, ConfigFlags } from "../config/index.js";
import { BenefitsSyncError, ConfigError, redact } from "../errors.js";
import { quietWhenReaderLeaves } from "./broken-pipe.js";
import { COMMANDS } from "./commands.js";
import type { CliIo, CommandContext } from "./context.js";
import { ExitCode } from "./exit-codes.js";
import { buildProgram, type Selection } from "./program.js";
import { shownOutput } from "./shown-output.js";
import { packageVersion } from "./version.js";

/**
 * Run the CLI with `argv` (without `node` and the script) and return the exit status.
 *
 * @example
 * const code = await main(["doctor", "--json"], { stdout: process.stdout, stderr: process.stderr });
 */
export async function main(argv: readonly string[], io: CliIo): Promise<number> {
  const { program, selected } = buildProgram(io);
  try {
    await program.parseAsync([...argv], { from: "user" });
  } catch (err) {
    if (err instanceof CommanderError) return usageExit(err, io);
    throw err;
  }
  const selection = selected();
  if (!selection) return ExitCode.USAGE; // unreachable: commander errors when no command matched
  return runCommand(selection, io);
}

function usageExit(err: CommanderError, io: CliIo): number {
  if (err.code === "commander.helpDisplayed" || err.code === "commander.version") return ExitCode.OK;
  if (err.code === "commander.unknownCommand") {
    io.stderr.write(`Commands: ${COMMANDS.map((c) => c.name).join(", ")}. See benefits-sync --help.\n`);
  }
  // Includes "commander.help": no command given, help went to stderr.
  return ExitCode.USAGE;
}

/** The commands that deliver to the configured sinks: only they need the sinks' settings to hold. */
const DELIVERING = new Set(["sync", "run", "schedule", "config check"]);

/** The commands that send traces and metrics when an OTLP endpoint is set (docs/metrics.md). */
const TRACED = new Set(["sync", "run", "schedule", "webhooks serve", "webhooks apply"]);

async function runCommand(selection: Selection, io: CliIo): Promise<number> {
  const env = io.env ?? process.env;
  const cwd = io.cwd ?? process.cwd();
  const g = selection.globals;
  let cached: Config | undefined;
  // Loaded here, not at the top: `--help` needs neither the job registry nor SQLite.
  const { loadCheckedConfig } = await import("./checked-config.js");
  const ctx: CommandContext = {
    options: selection.options,
    globals: g,
    // Every command's output goes through the one rule for untrusted text (shown-output.ts).
    stdout: shownOutput(io.stdout, g.json === true),
    stderr: shownOutput(io.stderr, g.json === true),
    env,
    cwd,
    config: (extra?: ConfigFlags) => {
      if (cached && !extra) return cached;
      const flags: ConfigFlags = { db: g.db, baseUrl: g.baseUrl, environment: g.env, ...extra };
      const config = loadCheckedConfig({ flags, env, cwd, configPath: g.config, sinks: DELIVERING.has(selection.spec.name) });
      if (!extra) cached = config;
      return config;
    },
  };
  // Off, and nothing of the SDK loaded, unless OTEL_EXPORTER_OTLP_* sets an endpoint.
  const telemetry = TRACED.has(selection.spec.name)
    ? await (await import("../telemetry/start.js")).startTelemetry(env, { version: packageVersion(), warn: (line) => void ctx.stderr.write(`${line}\n`) })
    : undefined;
  try {
    const mod = await selection.spec.load();
    return await mod.run(ctx);
  } catch (err) {
    if (err instanceof ConfigError) {
      ctx.stderr.write(`benefits-sync ${selection.spec.name}: ${err.message}\n`);
      return ExitCode.USAGE;
    }
    // Our errors are already redacted; anything else is redacted here, on its way out.
    const text = err instanceof BenefitsSyncError ? `${err.message} [${err.code}]` : redact(err instanceof Error ? err.message : String(err));
    ctx.stderr.write(`benefits-sync ${selection.spec.name}: ${text}\n`);
    return ExitCode.RUN_FAILED;
  } finally {
    // The command's last spans and metrics, within the export deadline: a short-lived sync would lose them otherwise.
    await telemetry?.shutdown();
  }
}

/** True when this file is the process's entry point (also through npm's bin symlink). */
function isEntryPoint(): boolean {
  const script = process.argv[1];
  if (!script) return false;
  try {
    return import.meta.url === pathToFileURL(realpathSync(script)).href;
  } catch {
    return false;
  }
}

if (isEntryPoint()) {
  quietWhenReaderLeaves(process.stdout);
  quietWhenReaderLeaves(process.stderr);
  main(process.argv.slice(2), { stdout: process.stdout, stderr: process.stderr }).then(
    (code) => {
      process.exitCode = code;
    },
    (err: unknown) => {
      process.stderr.write(`benefits-sync: ${redact(err instanceof Error ? (err.stack ?? err.message) : String(err))}\n`);
      process.exitCode = ExitCode.RUN_FAILED;
    },
  );
}

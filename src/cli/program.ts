/** The commander program, built from the command table. */
import { Command, Option } from "commander";
import { COMMANDS, type CommandSpec } from "./commands.js";
import type { CliIo, GlobalOptions } from "./context.js";
import { parserFor } from "./option-parsers.js";
import { packageVersion } from "./version.js";

/** Which service commands talk to: never guessed (a missing setting once meant the sandbox). */
const SERVICE_HELP = `
Service: none is assumed. Set BENEFITS_BASE_URL and BENEFITS_API_KEY (or
"environment" and "environments" in the config file), or pass --env sandbox
for the embedded sandbox (demo needs nothing). A snapshot syncs from the
service it was first synced from, and refuses any other.`;

/** `config check` is `check` under `config`: the group is made once, for the first of its commands. */
function parentOf(program: Command, name: string): Command {
  const group = name.split(" ").slice(0, -1)[0];
  if (group === undefined) return program;
  return program.commands.find((c) => c.name() === group) ?? program.command(group).summary(`${group} commands (see benefits-sync ${group} --help)`).helpCommand(false);
}

/** What parsing selected: a command from the table with its options. */
export interface Selection {
  readonly spec: CommandSpec;
  readonly options: Record<string, unknown>;
  readonly globals: GlobalOptions;
}

/**
 * Build the program. Actions only record the selection; `main` runs it, so errors from a command
 * are handled in one place rather than inside commander.
 *
 * @example
 * const { program, selected } = buildProgram(io); await program.parseAsync(argv, { from: "user" });
 */
export function buildProgram(io: CliIo): { program: Command; selected: () => Selection | undefined } {
  let selection: Selection | undefined;
  const program = new Command("benefits-sync")
    .description("Keep a faithful SQLite copy of the benefits administration service and report exactly what changed.")
    .version(packageVersion(), "-V, --version", "print the version")
    .helpOption("-h, --help", "show help")
    .helpCommand(false)
    .option("--config <file>", "config file (default: ./benefits-sync.config.json)")
    .option("--db <file>", "SQLite snapshot file (env BENEFITS_DB, default ./benefits-sync.db)")
    .option("--base-url <url>", "the service's base URL (env BENEFITS_BASE_URL); overrides --env")
    .addOption(
      new Option("--env <name>", "named environment (env BENEFITS_ENV); sandbox means the embedded sandbox").choices(["production", "demo", "sandbox"]),
    )
    .option("--json", "print one JSON object on stdout")
    .option("--quiet", "print only problems")
    .configureHelp({ showGlobalOptions: true })
    .configureOutput({
      writeOut: (s) => void io.stdout.write(s),
      writeErr: (s) => void io.stderr.write(s),
    })
    // commander's default exit status for a usage error is 1; ours is 2, set by main from the error.
    .exitOverride();

  for (const spec of COMMANDS) {
    const cmd = parentOf(program, spec.name).command(spec.name.split(" ").pop()!).summary(spec.summary).description(spec.description ?? spec.summary);
    if (spec.argument) cmd.argument(spec.argument.optional ? `[${spec.argument.name}]` : `<${spec.argument.name}>`, spec.argument.description);
    for (const opt of spec.options) {
      const parse = parserFor(opt);
      if (parse) cmd.option(opt.flags, opt.description, parse);
      else cmd.option(opt.flags, opt.description);
    }
    cmd.action((...args: unknown[]) => {
      const command = args[args.length - 1] as Command;
      const positional = spec.argument ? { [spec.argument.name]: args[0] } : {};
      selection = { spec, options: { ...command.opts(), ...positional }, globals: command.optsWithGlobals() as GlobalOptions };
    });
  }
  program.addHelpText("after", SERVICE_HELP);
  program.addHelpText("after", `\nExit status: 0 success, 1 the run failed, 2 bad usage or configuration, 75 another run or program\nholds the snapshot (the message names it; nothing changed; try again later), 130/143 stopped by SIGINT/SIGTERM (the run is\nrecorded as interrupted).\n`);
  return { program, selected: () => selection };
}

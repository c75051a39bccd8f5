/** `benefits-sync sandbox`: serve the local sandbox until stopped (see src/sandbox/cli.ts). */
import type { CommandContext } from "../context.js";

export async function run(ctx: CommandContext): Promise<number> {
  const { runSandboxCommand } = await import("../../sandbox/cli.js");
  return runSandboxCommand(ctx.options as Record<string, string | undefined>, { out: (line) => ctx.stdout.write(`${line}\n`) });
}

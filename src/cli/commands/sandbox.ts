/** `benefits-sync sandbox`: serve the local sandbox until stopped (see src/sandbox/cli.ts). */
import { UsageError } from "../../input-errors.js";
import type { CommandContext } from "../context.js";

export async function run(ctx: CommandContext): Promise<number> {
  const { runSandboxCommand, SandboxOptionsError } = await import("../../sandbox/cli.js");
  try {
    return await runSandboxCommand(ctx.options as Record<string, string | undefined>, { out: (line) => ctx.stdout.write(`${line}\n`) });
  } catch (err) {
    // The sandbox shares no module with the product: its option error becomes the CLI's usage error.
    if (err instanceof SandboxOptionsError) throw new UsageError(err.problems);
    throw err;
  }
}

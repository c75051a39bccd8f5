/** `benefits-sync sandbox`: serve the local sandbox and print its base URL and keys until stopped. */
import { startSandbox } from "./sandbox.js";
import { toSandboxOptions, untilStopped, type SandboxCommandOptions } from "./run-options.js";

export type { SandboxCommandOptions } from "./run-options.js";
export { SandboxOptionsError } from "./run-options.js";

export interface SandboxCommandIo {
  /** Where lines go; default stdout. */
  out?: (line: string) => void;
  /** Stop serving when aborted (tests); SIGINT and SIGTERM always stop it. */
  signal?: AbortSignal;
}

/**
 * Run the sandbox until SIGINT/SIGTERM. Resolves to the exit status (0); a bad option throws a
 * SandboxOptionsError (the CLI maps it to exit 2).
 * @example await runSandboxCommand({ port: "4010", members: "5000", seed: "7" });
 */
export async function runSandboxCommand(options: SandboxCommandOptions, io: SandboxCommandIo = {}): Promise<number> {
  const out = io.out ?? ((line: string) => process.stdout.write(`${line}\n`));
  const sb = await startSandbox(toSandboxOptions(options));
  // The sandbox's keys are local test credentials, printed by design so users can paste them.
  out(`benefits-sync sandbox: a local stand-in for the service, serving generated people (no real data).`);
  out(`Sandbox listening on ${sb.baseUrl}, today ${sb.today} (${options.today === undefined ? "the real date; --today fixes it" : "fixed by --today"})`);
  out(`  full key:       ${sb.keys.full}`);
  out(`  read-only key:  ${sb.keys.readOnly}`);
  out(`  no-claims key:  ${sb.keys.noClaims}`);
  out(`  try: BENEFITS_BASE_URL=${sb.baseUrl} BENEFITS_API_KEY=${sb.keys.full} benefits-sync sync`);
  out(`  a day passes: benefits-sync sandbox advance --url ${sb.baseUrl} [--days N]`);
  out(`  controls (loopback only): POST ${sb.baseUrl}/_sandbox/advance, GET|POST ${sb.baseUrl}/_sandbox/faults`);
  out("Press Ctrl+C to stop.");
  await untilStopped(io.signal);
  await sb.close();
  return 0;
}

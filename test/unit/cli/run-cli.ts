/** Run `main()` in-process with captured output. */
import { main } from "../../../src/cli/main.js";

export interface CliRun {
  code: number;
  stdout: string;
  stderr: string;
}

export async function runCli(argv: string[], opts: { env?: Record<string, string | undefined>; cwd?: string } = {}): Promise<CliRun> {
  let stdout = "";
  let stderr = "";
  const code = await main(argv, {
    stdout: { write: (s: string) => (stdout += s) },
    stderr: { write: (s: string) => (stderr += s) },
    env: opts.env ?? {},
    cwd: opts.cwd ?? process.cwd(),
  });
  return { code, stdout, stderr };
}

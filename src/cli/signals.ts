/**
 * SIGINT and SIGTERM during a command that runs: the run stops fetching, commits the page in hand
 * and is recorded as interrupted (failed, code INTERRUPTED: the next run resumes it); the command
 * then exits 130 (SIGINT) or 143 (SIGTERM), as shells and cron expect.
 */
import { ExitCode } from "./exit-codes.js";

export interface SignalWatch {
  readonly signal: AbortSignal;
  /** The first signal received, if any. */
  received(): NodeJS.Signals | undefined;
  /** The exit status the signal asks for, or `otherwise`. */
  exitCode(otherwise: number): number;
  dispose(): void;
}

export function watchSignals(): SignalWatch {
  const controller = new AbortController();
  let got: NodeJS.Signals | undefined;
  const on = (sig: NodeJS.Signals) => () => {
    got ??= sig;
    controller.abort(Object.assign(new Error(`stopped by ${sig}`), { code: "INTERRUPTED" }));
  };
  const onInt = on("SIGINT");
  const onTerm = on("SIGTERM");
  process.on("SIGINT", onInt);
  process.on("SIGTERM", onTerm);
  return {
    signal: controller.signal,
    received: () => got,
    exitCode: (otherwise) => (got === "SIGINT" ? ExitCode.SIGINT : got === "SIGTERM" ? ExitCode.SIGTERM : otherwise),
    dispose() {
      process.off("SIGINT", onInt);
      process.off("SIGTERM", onTerm);
    },
  };
}

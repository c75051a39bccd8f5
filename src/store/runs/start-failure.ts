/**
 * A run whose row was committed (the snapshot claimed) but that failed before its walk began:
 * the disk filled while its indexes or its SSN scrub were written, say. The run exists in the
 * run log, so the report must name it and say whether it is recorded failed, never "no run
 * started".
 */
export class RunStartFailedError extends Error {
  readonly code: string;
  /** The run the claim created (not `runId`: a SnapshotBusyError's names the run holding the snapshot). */
  readonly startedRunId: number;
  /** Whether the run's row now says failed; when false it stays `running` until the next run marks it failed. */
  readonly recorded: boolean;
  constructor(runId: number, recorded: boolean, cause: { code: string; message: string }) {
    super(cause.message, { cause });
    this.name = "RunStartFailedError";
    this.code = cause.code;
    this.startedRunId = runId;
    this.recorded = recorded;
  }
}

/** The run a failure of `startRun` leaves in the run log, if any (also across the snapshot thread). */
export function startedRunOf(e: unknown): { startedRunId: number; recorded: boolean } | undefined {
  const x = e as { startedRunId?: unknown; recorded?: unknown } | null;
  return typeof x?.startedRunId === "number" ? { startedRunId: x.startedRunId, recorded: x.recorded === true } : undefined;
}

/**
 * Exit statuses of the CLI, by name (contract.md: 0 success, 1 run failed, 2 usage or
 * configuration, 75 another run holds the snapshot: try again later, nothing was changed; 130 and
 * 143 stopped by SIGINT and SIGTERM, the run recorded as interrupted).
 */
export const ExitCode = {
  OK: 0,
  RUN_FAILED: 1,
  USAGE: 2,
  BUSY: 75,
  SIGINT: 130,
  SIGTERM: 143,
} as const;
export type ExitCode = (typeof ExitCode)[keyof typeof ExitCode];

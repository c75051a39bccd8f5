/** Exit statuses of the CLI, by name (contract.md: 0 success, 1 run failed, 2 usage or configuration). */
export const ExitCode = {
  OK: 0,
  RUN_FAILED: 1,
  USAGE: 2,
} as const;
export type ExitCode = (typeof ExitCode)[keyof typeof ExitCode];

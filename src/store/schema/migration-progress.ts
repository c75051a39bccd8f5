/**
 * What a long schema migration tells while it runs: converting a million-member snapshot takes
 * minutes, and a silent `benefits-sync` would look hung. On a terminal one line is redrawn (at
 * most five times a second), like a walk's progress; elsewhere (cron, a pipe, a library) nothing,
 * so no log or output gains lines it never had.
 */
export interface MigrationProgress {
  /** A step of migration `schema` (e.g. "claim lines"), `done` of `total` units when it counts them. */
  step(schema: number, what: string, done?: number, total?: number): void;
  /** The migrations are over (a newline after the redrawn line, if one was drawn). */
  finish(): void;
}

interface Terminal {
  readonly isTTY?: boolean;
  write(text: string): unknown;
}

export const silentProgress: MigrationProgress = { step: () => {}, finish: () => {} };

/** Progress on `out` when it is a terminal (stderr by default), nothing otherwise. */
export function terminalProgress(out: Terminal = process.stderr, now: () => number = Date.now): MigrationProgress {
  if (out.isTTY !== true) return silentProgress;
  const started = now();
  let drawn = false;
  let last = -Infinity;
  const seconds = () => `${Math.round((now() - started) / 1000)} s`;
  return {
    step(schema, what, done, total) {
      const counted = done !== undefined && total !== undefined && total > 0;
      // A counted step redraws at most five times a second; a new step is always shown.
      if (counted && done < total && now() - last < 200) return;
      last = now();
      const count = counted ? `: ${done.toLocaleString("en-US")} of ${total.toLocaleString("en-US")} (${Math.floor((100 * done) / total)}%)` : "";
      out.write(`\r\x1b[2Kupgrading the snapshot (schema ${schema}), ${what}${count}, ${seconds()}`);
      drawn = true;
    },
    finish() {
      if (drawn) out.write(`\r\x1b[2Kupgraded the snapshot in ${seconds()}\n`);
      drawn = false;
    },
  };
}

/** The file-system steps the folder and table sinks share. */
import { closeSync, fsyncSync, openSync } from "node:fs";
import { OutputError, explainFsError } from "../output-error.js";

/** Run a file-system step; its errors come out as an OutputError naming the path and the fix. */
export function fsStep<T>(parent: string, step: () => T): T {
  try {
    return step();
  } catch (e) {
    if (e instanceof OutputError) throw e;
    throw explainFsError(parent, (e as NodeJS.ErrnoException).path ?? parent, e);
  }
}

export function fsyncDir(dir: string): void {
  const fd = openSync(dir, "r");
  try {
    fsyncSync(fd);
  } finally {
    closeSync(fd);
  }
}

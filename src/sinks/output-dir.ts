import { accessSync, constants, mkdirSync, statSync, type Stats } from "node:fs";
import { dirname, resolve } from "node:path";
import type { OutputKind } from "../errors.js";
import { OutputError, explainFsError } from "./output-error.js";

export interface OutputDirOptions {
  /** What the directory receives, as errors name it. */
  readonly kind?: OutputKind;
  /**
   * Create missing parents too. A sink's folder does not (a missing parent of a nightly target is
   * more often a typo than a wish); a report's does (`reports/2026/03` is a filing scheme).
   */
  readonly parents?: boolean;
}

/**
 * Make sure `dir` is a directory output can be written into, creating it when it is missing.
 * Returns the absolute path. Every problem is an {@link OutputError} that names the path, the
 * problem and the fix.
 *
 * @example prepareOutputDir("deltas") // "/home/me/deltas", created if missing
 */
export function prepareOutputDir(dir: string, opts: OutputDirOptions = {}): string {
  return ensureOutputDir(dir, opts).path;
}

/**
 * {@link prepareOutputDir}, also saying whether this call created the directory (a sink sets the
 * permissions of a directory it made, and only adds to those of one it found).
 *
 * @example ensureOutputDir("deltas") // { path: "/home/me/deltas", created: true }
 */
export function ensureOutputDir(dir: string, opts: OutputDirOptions = {}): { path: string; created: boolean } {
  const kind = opts.kind ?? "deltas";
  const abs = resolve(dir);
  let created = false;
  const st = statOrCode(abs);
  if (st === "ENOENT" && opts.parents) {
    try {
      created = mkdirSync(abs, { recursive: true }) !== undefined;
    } catch (e) {
      const code = (e as NodeJS.ErrnoException).code ?? "EIO";
      throw pathProblem(abs, (e as NodeJS.ErrnoException).path ?? abs, code, kind);
    }
  } else if (st === "ENOENT") {
    const parent = dirname(abs);
    const pst = statOrCode(parent);
    if (pst === "ENOENT") {
      throw new OutputError(abs, `its parent directory ${parent} does not exist`, `create it first (mkdir -p ${parent}), or check the path for a typo`, undefined, kind);
    }
    if (typeof pst === "string") throw pathProblem(abs, parent, pst, kind);
    if (!pst.isDirectory()) throw notADirectory(abs, parent, kind);
    try {
      mkdirSync(abs);
      created = true;
    } catch (e) {
      // Another process may have created it meanwhile: that is fine if it is a directory.
      if (!((e as NodeJS.ErrnoException).code === "EEXIST" && statOrCode(abs) !== "ENOENT" && isDir(abs))) throw explainFsError(abs, abs, e, kind);
    }
  } else if (typeof st === "string") {
    throw pathProblem(abs, abs, st, kind);
  } else if (!st.isDirectory()) {
    throw notADirectory(abs, abs, kind);
  }
  try {
    accessSync(abs, constants.W_OK | constants.X_OK);
  } catch (e) {
    throw explainFsError(abs, abs, e, kind);
  }
  return { path: abs, created };
}

function statOrCode(p: string): Stats | string {
  try {
    return statSync(p);
  } catch (e) {
    return (e as NodeJS.ErrnoException).code ?? "EIO";
  }
}

const isDir = (p: string): boolean => {
  const st = statOrCode(p);
  return typeof st !== "string" && st.isDirectory();
};

function notADirectory(abs: string, file: string, kind: OutputKind): OutputError {
  return file === abs
    ? new OutputError(abs, "it is a file, not a directory", "point --out at a directory (it is created if missing), or move the file away", undefined, kind)
    : new OutputError(abs, `${file} is a file, not a directory`, `choose an --out path under a directory, or move ${file} away`, undefined, kind);
}

/** A stat failure on `p` (ENOTDIR: a file somewhere above it; EACCES: a directory above it that cannot be searched). */
function pathProblem(abs: string, p: string, code: string, kind: OutputKind): unknown {
  if (code === "ENOTDIR") {
    const file = firstFileAbove(p);
    if (file) return notADirectory(abs, file, kind);
  }
  return explainFsError(abs, p, Object.assign(new Error(code), { code }), kind);
}

/** The nearest ancestor of `p` that exists and is not a directory. */
function firstFileAbove(p: string): string | undefined {
  for (let a = dirname(p); a !== dirname(a); a = dirname(a)) {
    const st = statOrCode(a);
    if (typeof st !== "string") return st.isDirectory() ? undefined : a;
  }
  return undefined;
}

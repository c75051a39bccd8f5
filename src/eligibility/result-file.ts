/**
 * The result file of an apply: what was sent, each request's outcome, the UUIDs learned. Written
 * whole or not at all (a temporary file, then a rename), mode 0600, and checked for a plain SSN of
 * the census before it is renamed into place: the file is ours, so it follows the PHI rule.
 */
import { existsSync, mkdirSync, renameSync, writeFileSync } from "node:fs";
import { dirname, join } from "node:path";
import type { ApplyReport } from "./apply-census.js";
import type { CensusRow } from "./read-census.js";

/**
 * Where an apply's result goes by default: beside the snapshot, one file per apply, named by its
 * UTC start to the millisecond (`20261127T045512.345Z-<groupPolicyId>.json`). A name an earlier
 * apply already holds gets `-2`, `-3`, ...: the rename that writes the file would replace it, and
 * two applies a second apart (named to the second, as before) lost the first one's result.
 */
export function defaultResultPath(dbPath: string, groupPolicyId: string, at: Date): string {
  const stamp = at.toISOString().replace(/[-:]/g, "");
  const base = join(`${dbPath}.census`, "results", `${stamp}-${groupPolicyId.replace(/[^A-Za-z0-9_.-]/g, "_")}`);
  let path = `${base}.json`;
  for (let n = 2; existsSync(path); n++) path = `${base}-${n}.json`;
  return path;
}

export interface ResultMeta {
  readonly file: string;
  /** The census file's SHA-256 (hex). */
  readonly fileSha256: string;
  readonly service: string;
  readonly groupPolicyId: string;
  readonly groupNumber: string | null;
  readonly startedAt: string;
  readonly finishedAt: string;
}

/**
 * Write the result file at `path`; throws if the text would hold one of the census's SSNs (a bug,
 * never a file written with it).
 *
 * @example writeResultFile(path, report, meta, census.rows)
 */
export function writeResultFile(path: string, report: ApplyReport, meta: ResultMeta, rows: Iterable<CensusRow>): void {
  const doc = {
    ...meta,
    group: { groupPolicyId: meta.groupPolicyId, groupNumber: meta.groupNumber },
    ...report,
  };
  const text = `${JSON.stringify(doc, null, 2)}\n`;
  for (const r of rows) {
    const dashed = `${r.ssn.slice(0, 3)}-${r.ssn.slice(3, 5)}-${r.ssn.slice(5)}`;
    if (text.includes(r.ssn) || text.includes(dashed)) throw new Error(`the result file would hold the SSN of line ${r.line}; it was not written`);
  }
  mkdirSync(dirname(path), { recursive: true, mode: 0o700 });
  const tmp = `${path}.tmp-${process.pid}`;
  writeFileSync(tmp, text, { mode: 0o600 });
  renameSync(tmp, path);
}

/**
 * The hidden folders a run folder is written in (`DIR/.10.tmp-<host>-<pid>-XXXXXX`, and its
 * `.old` when a folder of the same run is replaced), or a state or history export
 * (`DIR/.state-00000010.tmp-<host>-<pid>-XXXXXX`, state-folder.ts), and the clearing of those a
 * writer left behind when it was killed. The name says who writes it: `<host>` (a hash of the host name) and
 * `<pid>`. Another writer's folder is removed only when it is certainly dead:
 *
 * - this host, another pid: that process is gone (a live one, delivering to the same folder at
 *   the same time, keeps its folder);
 * - this host and this pid: not one this process is writing now (a container restarts as pid 1);
 * - another host (a shared file system), or a name older versions wrote (`.10.tmp-XXXXXX`): its
 *   process cannot be checked from here, so only once nothing in it has changed for an hour.
 *
 * A leftover `.old` is a complete earlier folder of its run, set aside in the instant before its
 * replacement is renamed into place: when that run's folder is missing, it is put back.
 */
import { createHash } from "node:crypto";
import { hostname } from "node:os";
import { join } from "node:path";
import { existsSync, readdirSync, renameSync, rmSync, statSync } from "node:fs";
import { processAlive } from "../../store/runs/run-lease.js";
import { runFolderName } from "./run-folder-name.js";

/** How long a leftover whose writer cannot be checked must have been still before it is removed. */
export const UNCHECKABLE_AGE_MS = 60 * 60 * 1000;

const hostTag = (): string => createHash("sha256").update(hostname()).digest("hex").slice(0, 8);

/** Hidden folders this process is writing (absolute paths): never a leftover. */
const writing = new Set<string>();

/** The prefix of a new hidden folder for run `runId` (mkdtemp adds six characters). */
export const tempPrefix = (dir: string, runId: number): string => join(dir, `.${runId}.tmp-${hostTag()}-${process.pid}-`);

/** The prefix of a new hidden folder for the state export `name` (`state-00000010`, `history-00000010`). */
export const stateTempPrefix = (dir: string, name: string): string => join(dir, `.${name}.tmp-${hostTag()}-${process.pid}-`);

/** Mark `path` as being written by this process (`false`: no longer). */
export function markWriting(path: string, on: boolean): void {
  if (on) writing.add(path);
  else writing.delete(path);
}

// A run folder's (`.10.tmp-…`) or a state export's (`.state-00000010.tmp-…`; before the host tag, `.state-00000010.tmp-<pid>-XXXXXX`).
const NAME = /^\.(\d+)\.tmp-(?:([0-9a-f]{8})-(\d+)-)?[A-Za-z0-9]{6}(\.old)?$/;
const STATE_NAME = /^\.((?:state|history)-\d{8,})\.tmp-(?:([0-9a-f]{8})-)?(\d+)-[A-Za-z0-9]{6}(\.old)?$/;

/**
 * Remove from `dir` the hidden folders of writers that are gone (see the file's comment); put a
 * leftover `.old` back when its run's folder is missing. Best effort: never throws (what cannot
 * be removed now is tried again by the next delivery). Returns the names removed or restored.
 *
 * @example clearLeftovers("/data/deltas", Date.now()) // [".3.tmp-1a2b3c4d-4711-Xy12Zq"]
 */
export function clearLeftovers(dir: string, now: number = Date.now()): string[] {
  let names: string[];
  try {
    names = readdirSync(dir);
  } catch {
    return [];
  }
  const cleared: string[] = [];
  for (const name of names) {
    const run = NAME.exec(name);
    const state = run ? undefined : STATE_NAME.exec(name);
    const m = run ?? state;
    if (!m) continue;
    const path = join(dir, name);
    // A state folder named without the host tag (its pid alone) cannot be checked: the hour's rule.
    if (!writerGone(path, m[2], m[2] === undefined && state ? undefined : m[3], now)) continue;
    try {
      const final = join(dir, run ? runFolderName(Number(m[1])) : m[1]!);
      if (m[4] && !existsSync(final)) renameSync(path, final);
      else rmSync(path, { recursive: true, force: true });
      cleared.push(name);
    } catch {
      // Left for the next delivery.
    }
  }
  return cleared;
}

function writerGone(path: string, host: string | undefined, pid: string | undefined, now: number): boolean {
  if (host === hostTag() && pid !== undefined) {
    const p = Number(pid);
    if (p !== process.pid) return !processAlive(p);
    return ![...writing].some((w) => path === w || path === `${w}.old`);
  }
  return now - newestChange(path) >= UNCHECKABLE_AGE_MS;
}

/** The latest modification time of `path` and what it holds (one level: a run folder is flat). */
function newestChange(path: string): number {
  try {
    let t = statSync(path).mtimeMs;
    for (const f of readdirSync(path)) t = Math.max(t, statSync(join(path, f)).mtimeMs);
    return t;
  } catch {
    return Date.now(); // gone or unreadable meanwhile: not ours to judge now
  }
}

/**
 * The one rule for what is removed or replaced of the snapshot's person data (`prune`, `pii
 * rekey`, the SSN rule's scrub, a run amending a version it wrote, a failed run's versions taken
 * back): once the command returns, none of it is left in the bytes of the file, its WAL or its
 * SHM. SQLite leaves deleted and overwritten rows where they were: in the unused room of live
 * pages (a page split copies rows and leaves the old copies behind), in free pages, in the WAL's
 * earlier frames. A backup taken after a rekey would still join on the old key's tokens; a pruned
 * version would still be readable. What makes the bytes go (measured: removed-bytes.test.ts):
 *
 * 1. `secure_delete` for every connection that writes the snapshot (openDatabase), from the
 *    file's first row: SQLite writes zeros over each cell it deletes or moves, in the pages it
 *    writes anyway (`FAST`: no page is written for it alone). Turned on only for the command's
 *    own writes it is not enough: the rows' older copies that earlier page splits left in unused
 *    room stay (299 of 300 old tokens after a rekey, 78 of 100 pruned versions' notes). `ON`
 *    (every freed page written as zeros too) for all writers made a first sync's WAL outgrow a
 *    small disk; a removal command writes under `ON`, and hands the free pages back to the file
 *    system at its end (incremental vacuum), so pages freed earlier go with their bytes.
 * 2. A file written before this rule (no `erasure` mark in `_meta`) holds such copies from its
 *    past: the first `prune` that removes something, or `pii rekey`, rewrites it whole once
 *    (SQLite's VACUUM, which copies only live rows), then marks it. That needs free disk of twice
 *    the file; without it the command says so and what to do. The SSN rule's scrub does not (it
 *    runs at a sync's start): on such a file, older copies of what it masked may stay until then.
 * 3. The command's end: the WAL checkpointed and truncated (the file's pages hold the zeros only
 *    then; the WAL's earlier frames hold the pages as they were). The SHM holds only the WAL's
 *    index, never row bytes. A reader holding a read transaction past the busy timeout keeps the
 *    WAL: the command says so (`walEmptied: false`), and the next checkpoint empties it.
 *
 * A writer that does not follow the rule (an older benefits-sync, an outside `sqlite3`) can leave
 * copies again; `prune --vacuum` rewrites the file whole whatever the mark says.
 */
import type { Database } from "better-sqlite3";
import { statfsSync } from "node:fs";
import { dirname } from "node:path";

const MARK = "erasure";

/** For openDatabase: every writable connection writes under the rule, from the file's creation. */
export function writeUnderErasureRule(db: Database): void {
  db.pragma("secure_delete = FAST");
}

/** For openDatabase: a new file, its schema just made, has been written under the rule only. */
export function markWrittenUnderErasureRule(db: Database): void {
  markClean(db);
}

/** Whether every write of this file so far was under the rule (or it was rewritten whole since). */
export function writtenUnderErasureRule(db: Database): boolean {
  return db.prepare("SELECT 1 FROM _meta WHERE key = ?").get(MARK) !== undefined;
}

function markClean(db: Database): void {
  db.prepare("INSERT OR IGNORE INTO _meta (key, value) VALUES (?, ?)").run(MARK, new Date().toISOString());
}

export interface Erasure {
  /**
   * The command's writes are done: the file rewritten whole if it was written before the rule
   * (`rewrite`: whether to, default yes), then the WAL emptied. What the file holds now.
   */
  finish(opts?: { rewrite?: boolean }): Erased;
}

export interface Erased {
  /** False: a reader held the WAL; what was removed leaves it at the next checkpoint. */
  readonly walEmptied: boolean;
  /** `full`: rewritten whole now (a file written before the rule, or asked for). */
  readonly rewritten?: "full";
  /** Why a file written before the rule could not be rewritten: older copies of removed rows may stay in it. */
  readonly note?: string;
}

/**
 * The rule for the writes that follow, on `db` (a connection not made by openDatabase included).
 *
 * @example const erasure = startErasure(db); rewriteVersions(db); const { walEmptied } = erasure.finish();
 */
export function startErasure(db: Database): Erasure {
  const was = db.pragma("secure_delete", { simple: true }) as number;
  db.pragma("secure_delete = ON");
  return {
    finish(opts = {}) {
      let rewritten: Erased["rewritten"];
      let note: string | undefined;
      if ((opts.rewrite ?? true) && db.name !== ":memory:" && !writtenUnderErasureRule(db)) {
        note = wholeRewriteRefusal(db);
        if (note === undefined) {
          rewriteWhole(db);
          rewritten = "full";
        } else note = `${note}; older copies of what was removed may stay in the file's unused room until then`;
      }
      // Pages freed before (by writers under FAST, below) keep their old bytes: handed back to the file system.
      if (!rewritten && (db.pragma("auto_vacuum", { simple: true }) as number) === 2) db.pragma("incremental_vacuum");
      db.pragma(`secure_delete = ${was}`);
      return { walEmptied: emptyWal(db), ...(rewritten ? { rewritten } : {}), ...(note ? { note } : {}) };
    },
  };
}

/** On a failure's way out (no whole rewrite): the checkpoint may fail too (a full disk), and the failure is the one said. */
export function tryFinish(erasure: Erasure): void {
  try {
    erasure.finish({ rewrite: false });
  } catch {
    // the failure being thrown is the one to say
  }
}

/** Whether `db` writes under the rule now (a rewrite of person data refuses to run without it). */
export function isErasing(db: Database): boolean {
  return (db.pragma("secure_delete", { simple: true }) as number) === 1;
}

/** The file's size as SQLite sees it (its pages, those still in the WAL included). */
export const pageBytes = (db: Database): number => (db.pragma("page_count", { simple: true }) as number) * (db.pragma("page_size", { simple: true }) as number);

/** Why the file cannot be rewritten whole here (too little free disk), or undefined when it can. */
export function wholeRewriteRefusal(db: Database): string | undefined {
  if (db.name === ":memory:") return undefined;
  const size = pageBytes(db);
  const fs = statfsSync(dirname(db.name));
  const free = fs.bavail * fs.bsize;
  if (free >= 2 * size) return undefined;
  return `rewriting the file whole (VACUUM) needs free disk of twice the file (${Math.round((2 * size) / 1e6)} MB; ${Math.round(free / 1e6)} MB free beside it): free the space and run \`benefits-sync prune --vacuum\``;
}

/** SQLite's VACUUM (only live rows are copied), then the file marked clean. */
export function rewriteWhole(db: Database): void {
  // VACUUM's memory follows the page cache (100,000 members: 206 MB at the store's 32 MB cache,
  // 57 MB at 2 MB, and no slower: 2.7 s against 2.6 s).
  const cache = db.pragma("cache_size", { simple: true }) as number;
  db.pragma("cache_size = -2048");
  try {
    db.exec("VACUUM");
  } finally {
    db.pragma(`cache_size = ${cache}`);
  }
  markClean(db);
}

/** Copy the WAL into the file and truncate it, if no other connection is in the way: never waits for one. */
export function tryEmptyWal(db: Database): void {
  if (db.name === ":memory:" || db.readonly) return;
  const timeout = db.pragma("busy_timeout", { simple: true }) as number;
  try {
    db.pragma("busy_timeout = 0");
    db.pragma("wal_checkpoint(TRUNCATE)");
  } catch {
    // A reader holds the WAL: a later checkpoint empties it.
  } finally {
    db.pragma(`busy_timeout = ${timeout}`);
  }
}

/** Copy the WAL into the file and truncate it, waiting for readers up to the busy timeout. */
function emptyWal(db: Database): boolean {
  if (db.name === ":memory:" || db.readonly) return true;
  const [r] = db.pragma("wal_checkpoint(TRUNCATE)") as { busy: number }[];
  return r === undefined || r.busy === 0;
}

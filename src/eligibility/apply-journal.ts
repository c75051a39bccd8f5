/**
 * The apply's memory across crashes: each write is recorded before it is sent and its answer when
 * it comes, each line flushed to disk before the next step, so a `kill -9` at any point leaves a
 * journal that says which writes may have reached the service. No SSN, no demographic value: lines,
 * SSN tokens and ids. A lock file (journal-lock.ts) keeps two applies off one group.
 */
import { closeSync, existsSync, fsyncSync, mkdirSync, readdirSync, readFileSync, writeSync } from "node:fs";
import { dirname, join } from "node:path";
import { underSnapshotKey } from "../store/pii/key-guard.js";
import { openBesideSqlite } from "../store/file/sqlite-file.js";
import { takeJournalLock, type JournalLock } from "./journal-lock.js";

export { JournalBusyError } from "./journal-lock.js";

export const WriteKinds = ["add-subscriber", "add-dependent", "terminate", "patch-member"] as const;
export type WriteKind = (typeof WriteKinds)[number];

export type JournalEntry =
  | { readonly t: "intent"; readonly id: string; readonly kind: WriteKind; readonly lines: readonly number[]; readonly tokens: readonly string[]; readonly at: string }
  | { readonly t: "accepted"; readonly id: string; readonly enrollmentRequestId: string; readonly at: string }
  | { readonly t: "outcome"; readonly id: string; readonly outcome: string; readonly settled: boolean; readonly message?: string; readonly at: string };

/** The snapshot whose key the journal's tokens are under. */
export interface JournalSnapshot {
  readonly dbPath: string;
  readonly key: Buffer;
}

/** A write the journal has no final outcome for: it may or may not have reached the service. */
export interface OpenWrite {
  readonly intent: Extract<JournalEntry, { t: "intent" }>;
  readonly enrollmentRequestId?: string;
  /** The last outcome recorded without settling it (`unsettled`, `accepted-unlisted`), if any. */
  readonly outcome?: string;
}

export class ApplyJournal {
  private constructor(
    readonly path: string,
    private readonly fd: number,
    private readonly entries: JournalEntry[],
    private readonly lock: JournalLock,
    private readonly snapshot: JournalSnapshot | undefined,
  ) {}

  /**
   * Open (or create, mode 0600, its folder 0700) the journal at `path` and take its lock. A lock
   * left by a process that is gone (killed) is taken over. With `snapshot`, each intent (it names
   * people by SSN token) is written holding the snapshot's write lock under its key
   * (store/pii/key-guard.ts): after a `pii rekey` it is refused, never written under the old key.
   *
   * @example const journal = ApplyJournal.open("snap.db.census/gp1.journal.jsonl", { dbPath: "snap.db", key });
   */
  static open(path: string, snapshot?: JournalSnapshot): ApplyJournal {
    mkdirSync(dirname(path), { recursive: true, mode: 0o700 });
    const lock = takeJournalLock(`${path}.lock`);
    return new ApplyJournal(path, openBesideSqlite(path, "a", 0o600), readJournalEntries(path), lock, snapshot);
  }

  /** Append one entry and flush it to disk before returning (an intent under the snapshot's key, see open). */
  append(entry: JournalEntry): void {
    const write = () => {
      writeSync(this.fd, `${JSON.stringify(entry)}\n`);
      fsyncSync(this.fd);
    };
    if (entry.t === "intent" && this.snapshot) underSnapshotKey(this.snapshot.dbPath, this.snapshot.key, write);
    else write();
    this.entries.push(entry);
  }

  /** The writes with no settled outcome, oldest first. */
  openWrites(): OpenWrite[] {
    return openWritesOf(this.entries);
  }

  /** Close the journal and release its lock, if it is still this apply's own. */
  close(): void {
    closeSync(this.fd);
    this.lock.release();
  }
}

/** The entries of the journal at `path` (none when there is no file). */
export function readJournalEntries(path: string): JournalEntry[] {
  const entries: JournalEntry[] = [];
  if (!existsSync(path)) return entries;
  for (const line of readFileSync(path, "utf8").split("\n")) {
    if (line.trim() === "") continue;
    try {
      entries.push(JSON.parse(line) as JournalEntry);
    } catch {
      // A line cut short by a crash mid-write: the step it recorded never happened after it.
    }
  }
  return entries;
}

/** The writes of `entries` with no settled outcome, oldest first. */
export function openWritesOf(entries: readonly JournalEntry[]): OpenWrite[] {
  const open = new Map<string, { intent: Extract<JournalEntry, { t: "intent" }>; enrollmentRequestId?: string; outcome?: string }>();
  for (const e of entries) {
    if (e.t === "intent") open.set(e.id, { intent: e });
    else if (e.t === "accepted") {
      const w = open.get(e.id);
      if (w) w.enrollmentRequestId = e.enrollmentRequestId;
    } else if (e.settled) open.delete(e.id);
    else {
      const w = open.get(e.id);
      if (w) w.outcome = e.outcome;
    }
  }
  return [...open.values()];
}

/**
 * The census journals beside the snapshot at `dbPath` (`<db>.census/*.journal.jsonl`) that hold
 * writes with no settled outcome: their intents name people by SSN token, under the snapshot's key.
 */
export function journalsWithOpenWrites(dbPath: string): { readonly path: string; readonly open: number }[] {
  const dir = `${dbPath}.census`;
  if (!existsSync(dir)) return [];
  return readdirSync(dir)
    .filter((f) => f.endsWith(".journal.jsonl"))
    .map((f) => ({ path: join(dir, f), open: openWritesOf(readJournalEntries(join(dir, f))).length }))
    .filter((j) => j.open > 0);
}

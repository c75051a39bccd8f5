/**
 * Outside readers among the simulation's faults: another program (the `sqlite3` shell, as an
 * analyst or an operator runs it) reads the snapshot and the webhook inbox while this process
 * holds them, and this process opens them again beside its open connections, as production does
 * (the webhook worker opens the inbox each round, `runs` and the lease open the snapshot while a
 * sync holds it).
 *
 * Why both at once: on Linux, closing any descriptor of a file drops every POSIX lock this process
 * holds on it (SQLite's "How To Corrupt An SQLite Database File", 2.2). A reopen that opened and
 * closed a raw descriptor left the receiver's and the store's connections without their locks; the
 * outside reader, believing itself the last connection, then checkpointed and removed `-wal` and
 * `-shm` under them, and what they committed after that went into an unlinked file: events
 * answered 2xx missing from the inbox, pages missing from the snapshot, or a file "not a database".
 *
 * Drawn from the seed's own stream 9 (a seed's schedule is unchanged): 50% of schedules have
 * outside readers (`SIM_OUTSIDE=1`: all, `0`: none). At each point the harness offers (between a
 * day's operations, around webhook batches and drains, at a drawn page of a run while it holds the
 * snapshot), with a drawn chance: this process reopens the inbox and/or the snapshot, then an
 * outside `sqlite3` process reads one or both (and sometimes writes a note of its own to the
 * inbox). Checked here: each outside read succeeds (a reader that finds "not a database" or a
 * malformed file is a violation); at the end `PRAGMA integrity_check` of both files is `ok`. Lost events and lost pages are caught by the checks that
 * already compare the inbox and the snapshot with what was promised (webhook-lost-accepted,
 * final-state, the deliveries).
 */
import { execFile } from "node:child_process";
import { existsSync } from "node:fs";
import { openDatabase } from "../../src/store/file/database.js";
import { Inbox, inboxPathFor } from "../../src/webhooks/inbox.js";
import type { Violation } from "./invariants.js";
import { Rng } from "./rng.js";

/** The outside program: Debian's `sqlite3` shell (.ci/run installs it when missing). */
export const SQLITE3 = "/usr/bin/sqlite3";

/** Whether a schedule has outside readers: 50% of them, from the seed's stream 9 (`SIM_OUTSIDE=1`/`0` forces it). */
export function drawOutside(seed: number, forced?: boolean): boolean {
  const drawn = Rng.derive(seed, 9).chance(0.5);
  return forced ?? drawn;
}

/** Run the sqlite3 shell on `file` with `sql`; resolves with its output or its error text. */
function sqlite3(file: string, sql: string): Promise<{ ok: boolean; out: string }> {
  return new Promise((resolve) => {
    // A plain shell, as an operator types it (not `-readonly`: such a shell checkpoints and removes
    // the WAL when it believes itself the last connection); `.timeout`: it waits out a commit.
    execFile(SQLITE3, ["-cmd", ".timeout 5000", file, sql], { timeout: 30_000 }, (err, stdout, stderr) => {
      resolve({ ok: err === null, out: `${stdout}${stderr}`.trim() || (err?.message ?? "") });
    });
  });
}

export class OutsideReaders {
  readonly violations: Violation[] = [];
  private readonly rng: Rng;
  private visits = 0;

  /**
   * @param snapshotPath the snapshot file (the inbox is beside it, when webhooks are on)
   * @param webhooks whether this schedule has an inbox to read
   */
  constructor(
    seed: number,
    private readonly snapshotPath: string,
    private readonly webhooks: boolean,
    private readonly trace: string[],
    private readonly stats: Record<string, number>,
  ) {
    this.rng = Rng.derive(seed, 9_000);
  }

  private bump(k: string): void {
    this.stats[k] = (this.stats[k] ?? 0) + 1;
  }

  private get inboxPath(): string {
    return inboxPathFor(this.snapshotPath);
  }

  /**
   * Maybe (drawn) reopen the files in this process beside its connections, then read them from
   * another process. `snapshotMade`: no sync has created the snapshot yet (nothing to read).
   */
  async visit(where: string, snapshotMade: boolean): Promise<void> {
    if (!this.rng.chance(0.5)) return;
    const n = ++this.visits;
    const inbox = this.webhooks && existsSync(this.inboxPath) && this.rng.chance(0.7);
    const snapshot = snapshotMade && existsSync(this.snapshotPath) && (this.rng.chance(0.6) || !inbox);
    const reopen = this.rng.chance(0.8);
    if (!inbox && !snapshot) return;
    // This process opens the files again while its own connections hold them (the worker's round, `runs`, the lease).
    try {
      if (reopen && inbox) Inbox.open(this.inboxPath).close();
      if (reopen && snapshot) openDatabase(this.snapshotPath).close();
    } catch (e) {
      this.violations.push({ kind: "outside-read", message: `${where}, visit ${n}: this process could not open the files again beside its own connections: ${e instanceof Error ? e.message : String(e)}` });
    }
    const reads: Promise<void>[] = [];
    // Sometimes the shell writes to the inbox too (a note of its own, in a table the inbox never reads).
    const write = inbox && this.rng.chance(0.3);
    const note = write ? "CREATE TABLE IF NOT EXISTS outside_note (n INTEGER); INSERT INTO outside_note VALUES (1); " : "";
    if (inbox) reads.push(this.read(`${where}, visit ${n}`, "inbox", this.inboxPath, `${note}SELECT count(*) FROM inbox_events;`));
    if (snapshot) reads.push(this.read(`${where}, visit ${n}`, "snapshot", this.snapshotPath, "SELECT count(*) FROM runs; SELECT count(*) FROM members;"));
    await Promise.all(reads);
    this.bump("outside reads");
    if (reopen) this.bump("outside reads after a reopen in this process");
    if (write) this.bump("outside writes to the inbox");
    this.trace.push(`  (outside) visit ${n} ${where}: ${reopen ? "reopened here, then " : ""}sqlite3 ${write ? "wrote to the inbox and " : ""}read ${[inbox ? "the inbox" : "", snapshot ? "the snapshot" : ""].filter(Boolean).join(" and ")}`);
  }

  private async read(where: string, what: string, file: string, sql: string): Promise<void> {
    const r = await sqlite3(file, sql);
    if (!r.ok) this.violations.push({ kind: "outside-read", message: `${where}: an outside reader of the ${what} failed: ${r.out.slice(0, 200)}` });
  }

  /** At the end: both files pass `PRAGMA integrity_check`, read by another process. */
  async finalCheck(): Promise<void> {
    for (const [what, file] of [["snapshot", this.snapshotPath], ...(this.webhooks ? [["inbox", this.inboxPath]] : [])] as const) {
      if (!existsSync(file)) continue;
      const r = await sqlite3(file, "PRAGMA integrity_check;");
      if (!r.ok || r.out !== "ok") this.violations.push({ kind: "outside-integrity", message: `the ${what}'s integrity check by another process: ${r.out.slice(0, 200)}` });
    }
  }
}

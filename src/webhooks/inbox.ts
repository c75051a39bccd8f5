/**
 * The webhook inbox: every accepted event, durable before the sender gets its 2xx.
 *
 * It is a SQLite file of its own beside the snapshot (see {@link inboxPathFor}), never a table
 * of the snapshot: a full walk holds the snapshot's writer for minutes, and accepting an event
 * must not wait behind it. Its connection commits with `synchronous = FULL` (WAL's NORMAL may
 * lose the last commit on a power loss, and a 2xx is a promise). The event id is the primary key
 * and a repeated id is ignored inside the accepting transaction, so a retried or duplicated
 * delivery gets its 2xx and no second row.
 *
 * The receiver calls {@link Inbox.accept} once per group of events (group commit: one fsync for
 * all the events that arrived together); the worker takes {@link Inbox.due} member by member,
 * then marks the events applied, failed (retried later) or parked (given up, with the reason).
 */
import BetterSqlite3 from "better-sqlite3";
import type { Database, Statement } from "better-sqlite3";
import { chmodSync } from "node:fs";
import { ConfigError } from "../errors.js";
import { createSqliteFile } from "../store/file/sqlite-file.js";

/** A path given for the inbox that holds another application's SQLite file: refused, untouched. */
export class NotAnInboxError extends ConfigError {
  override readonly code = "NOT_AN_INBOX";
  constructor(path: string, looksLike: string) {
    super([`webhooks inbox: ${path} is not a benefits-sync inbox: it is ${looksLike}. Nothing was changed. Move that file, or point the inbox at a path with no file yet`]);
  }
}

/** `PRAGMA application_id` of an inbox file: "BSWH". Another application's file is refused untouched. */
export const INBOX_APPLICATION_ID = 0x42535748;

/** One event as received: the sender's id, its type, and for `member_update` the member's id. */
export interface InboxEvent {
  id: string;
  type: string;
  memberId: string | null;
  receivedAt: string;
}

/** The events of one member that are due, coalesced: one refetch answers them all. */
export interface DueMember {
  memberId: string;
  eventIds: string[];
  attempts: number;
  /** When the oldest of its pending events was received (ISO 8601): the apply lag is counted from it. */
  firstReceivedAt: string;
}

export interface InboxStatus {
  pending: number;
  oldestPendingAt: string | null;
  parked: { id: string; memberId: string | null; reason: string; at: string }[];
  ignored: number;
  applied: number;
  lastAppliedAt: string | null;
  lastAppliedRun: number | null;
}

const SCHEMA = `
CREATE TABLE IF NOT EXISTS inbox_events (
  event_id TEXT PRIMARY KEY,
  type TEXT NOT NULL,
  member_id TEXT,
  received_at TEXT NOT NULL,
  state TEXT NOT NULL CHECK (state IN ('pending', 'applied', 'ignored', 'parked')),
  attempts INTEGER NOT NULL DEFAULT 0,
  next_attempt_at TEXT,
  reason TEXT,
  done_at TEXT,
  run_id INTEGER
) WITHOUT ROWID;
CREATE INDEX IF NOT EXISTS inbox_pending ON inbox_events (state, next_attempt_at, member_id);
CREATE INDEX IF NOT EXISTS inbox_done ON inbox_events (state, done_at);
`;

/**
 * The inbox file for a snapshot: `benefits-sync.db` → `benefits-sync.inbox.db`, in the same folder.
 *
 * @example inboxPathFor("/var/lib/bs/benefits-sync.db") // "/var/lib/bs/benefits-sync.inbox.db"
 */
export function inboxPathFor(dbPath: string): string {
  return `${dbPath.replace(/\.(db|sqlite3?)$/i, "")}.inbox.db`;
}

export class Inbox {
  private readonly insert: Statement;
  private readonly acceptAll: (events: InboxEvent[]) => boolean[];
  /** The last accept failed: {@link probe} writes until a write succeeds again. */
  private acceptFailed = false;

  private constructor(private readonly db: Database) {
    this.insert = db.prepare(
      "INSERT INTO inbox_events (event_id, type, member_id, received_at, state, next_attempt_at, done_at) VALUES (?, ?, ?, ?, ?, ?, ?) ON CONFLICT (event_id) DO NOTHING",
    );
    this.acceptAll = db.transaction((events: InboxEvent[]) =>
      events.map((e) => {
        const acted = e.type === "member_update" && e.memberId !== null;
        return this.insert.run(e.id, e.type, e.memberId, e.receivedAt, acted ? "pending" : "ignored", acted ? e.receivedAt : null, acted ? null : e.receivedAt).changes === 1;
      }),
    ).immediate;
  }

  /**
   * Open (or create) the inbox at `path`; a file that is not an inbox is refused before anything
   * is written to it. Called while other threads of this process hold the inbox open (the writer
   * thread, the worker each second): no raw descriptor of the file, see store/file/sqlite-file.ts.
   */
  static open(path: string): Inbox {
    if (path !== ":memory:") createSqliteFile(path);
    const db = new BetterSqlite3(path);
    try {
      const id = db.pragma("application_id", { simple: true }) as number;
      const tables = db.prepare("SELECT count(*) AS n FROM sqlite_schema").get() as { n: number };
      if (id !== INBOX_APPLICATION_ID && (id !== 0 || tables.n > 0)) {
        throw new NotAnInboxError(path, id === 0 ? "a SQLite database of another application" : `a SQLite database of another application (application_id 0x${id.toString(16).padStart(8, "0")})`);
      }
      if (path !== ":memory:") chmodSync(path, 0o600);
      db.pragma("busy_timeout = 5000");
      db.pragma("journal_mode = WAL");
      db.pragma("synchronous = FULL");
      db.exec(SCHEMA);
      db.pragma(`application_id = ${INBOX_APPLICATION_ID}`);
      return new Inbox(db);
    } catch (err) {
      db.close();
      throw err;
    }
  }

  /**
   * Store events in one transaction (one fsync); returns, per event, whether it was new. Events of
   * another type are kept as `ignored` (recorded, so the sender stops retrying, and never acted on).
   * Throws when the file cannot be written: the receiver answers 503 so the sender retries.
   */
  accept(events: InboxEvent[]): boolean[] {
    if (events.length === 0) return [];
    try {
      const results = this.acceptAll(events);
      this.acceptFailed = false;
      return results;
    } catch (e) {
      this.acceptFailed = true;
      throw e;
    }
  }

  /**
   * Can the inbox be written now (a health check)? Throws as {@link accept} would. It takes the
   * write lock and lets it go, writing nothing (a lock held by another program fails it); only
   * after a failed accept (a full disk) does it write and commit, the file's own application id,
   * so nothing in it changes, until a write succeeds again.
   */
  probe(): void {
    if (this.acceptFailed) {
      this.db.pragma(`application_id = ${INBOX_APPLICATION_ID}`);
      this.acceptFailed = false;
      return;
    }
    this.db.exec("BEGIN IMMEDIATE");
    this.db.exec("ROLLBACK");
  }

  /** Members with events due at `now`, oldest first, each member once with all its pending events. */
  due(now: string, limit: number): DueMember[] {
    const rows = this.db
      .prepare(
        `SELECT member_id AS memberId, json_group_array(event_id) AS ids, max(attempts) AS attempts, min(received_at) AS first
         FROM inbox_events WHERE state = 'pending' AND member_id IS NOT NULL
         GROUP BY member_id HAVING min(next_attempt_at) <= ? ORDER BY first LIMIT ?`,
      )
      .all(now, limit) as { memberId: string; ids: string; attempts: number; first: string }[];
    return rows.map((r) => ({ memberId: r.memberId, eventIds: JSON.parse(r.ids) as string[], attempts: r.attempts, firstReceivedAt: r.first }));
  }

  /** The events were applied to the snapshot by run `runId` (a refetch that found nothing new counts too). */
  applied(eventIds: string[], runId: number | null, at: string): void {
    this.update(eventIds, "UPDATE inbox_events SET state = 'applied', done_at = ?, run_id = ?, reason = NULL WHERE event_id = ? AND state = 'pending'", (id) => [at, runId, id]);
  }

  /** A refetch failed: try again at `retryAt`, or park the events with `reason` once they reach `maxAttempts`. */
  failed(eventIds: string[], reason: string, at: string, retryAt: string, maxAttempts: number): void {
    this.update(
      eventIds,
      `UPDATE inbox_events SET attempts = attempts + 1, reason = ?,
         state = CASE WHEN attempts + 1 >= ? THEN 'parked' ELSE 'pending' END,
         done_at = CASE WHEN attempts + 1 >= ? THEN ? ELSE NULL END,
         next_attempt_at = ? WHERE event_id = ? AND state = 'pending'`,
      (id) => [reason, maxAttempts, maxAttempts, at, retryAt, id],
    );
  }

  /** Give up on events at once (a member the service answers for with a shape we cannot read). */
  park(eventIds: string[], reason: string, at: string): void {
    this.update(eventIds, "UPDATE inbox_events SET state = 'parked', reason = ?, done_at = ? WHERE event_id = ? AND state = 'pending'", (id) => [reason, at, id]);
  }

  status(parkedLimit = 20): InboxStatus {
    const counts = this.db.prepare("SELECT state, count(*) AS n FROM inbox_events GROUP BY state").all() as { state: string; n: number }[];
    const n = (s: string) => counts.find((c) => c.state === s)?.n ?? 0;
    const oldest = this.db.prepare("SELECT min(received_at) AS at FROM inbox_events WHERE state = 'pending'").get() as { at: string | null };
    const last = this.db.prepare("SELECT done_at AS at, run_id AS run FROM inbox_events WHERE state = 'applied' ORDER BY done_at DESC LIMIT 1").get() as { at: string; run: number | null } | undefined;
    const parked = this.db
      .prepare("SELECT event_id AS id, member_id AS memberId, coalesce(reason, '') AS reason, done_at AS at FROM inbox_events WHERE state = 'parked' ORDER BY done_at DESC LIMIT ?")
      .all(parkedLimit) as InboxStatus["parked"];
    return { pending: n("pending"), oldestPendingAt: oldest.at, parked, ignored: n("ignored"), applied: n("applied"), lastAppliedAt: last?.at ?? null, lastAppliedRun: last?.run ?? null };
  }

  /**
   * Forget events finished before `before` (applied, ignored, parked). Their ids go with them, so
   * keep them as long as the sender may still resend one (manual retries: 30 days by default).
   */
  prune(before: string): number {
    return this.db.prepare("DELETE FROM inbox_events WHERE state <> 'pending' AND done_at IS NOT NULL AND done_at < ?").run(before).changes;
  }

  close(): void {
    this.db.close();
  }

  private update(eventIds: string[], sql: string, params: (id: string) => unknown[]): void {
    const stmt = this.db.prepare(sql);
    this.db.transaction(() => {
      for (const id of eventIds) stmt.run(...params(id));
    }).immediate();
  }
}

/**
 * Group commit: the events that arrive within a few milliseconds share one inbox transaction, so
 * one fsync makes them all durable, and each request is answered only after that commit. One fsync
 * per request would cap the receiver at a few hundred events a second; sharing it is how a 2-core
 * machine answers thousands, every 2xx still a promise kept.
 *
 * One commit at a time: the events that arrive while a group commits (on the inbox's writer
 * thread, see inbox-writer.ts) form the next group, committed the moment the first is done. So
 * the group grows with the load by itself; the window only gathers a quiet moment's stragglers.
 * A synchronous inbox (the tests', or SQLite on this thread) works the same, one turn at a time.
 */
import type { InboxEvent } from "./inbox.js";

/** The slice of the inbox this needs. */
export interface AcceptingInbox {
  accept(events: InboxEvent[]): boolean[] | Promise<boolean[]>;
}

interface Waiting {
  readonly event: InboxEvent;
  readonly resolve: (isNew: boolean) => void;
  readonly reject: (e: unknown) => void;
}

export interface GroupCommitOptions {
  /** How long the first event of a group waits for others (milliseconds; 0 = the next turn). */
  readonly windowMs?: number;
  /** A group this large commits at once. */
  readonly maxGroup?: number;
}

export class GroupCommit {
  private waiting: Waiting[] = [];
  private timer: NodeJS.Timeout | undefined;
  /** A group is being committed: what arrives meanwhile waits for it, then commits at once. */
  private committing = false;
  private readonly windowMs: number;
  private readonly maxGroup: number;
  /** Commits made, and events in them (for the metrics: events / commits is the group size). */
  commits = 0;
  committed = 0;

  constructor(
    private readonly inbox: AcceptingInbox,
    options: GroupCommitOptions = {},
  ) {
    this.windowMs = options.windowMs ?? 2;
    this.maxGroup = options.maxGroup ?? 1000;
  }

  /**
   * Resolves once the event is committed: true when it was new, false for a repeated id. Rejects
   * with the storage error when the group's commit failed (nothing of the group was stored).
   */
  submit(event: InboxEvent): Promise<boolean> {
    return new Promise((resolve, reject) => {
      this.waiting.push({ event, resolve, reject });
      if (this.waiting.length >= this.maxGroup) this.flush();
      else this.timer ??= setTimeout(() => this.flush(), this.windowMs);
    });
  }

  /** Commit what is waiting now, or as soon as the group in hand is committed (also called when the receiver stops). */
  flush(): void {
    if (this.timer) clearTimeout(this.timer);
    this.timer = undefined;
    if (this.committing) return;
    const group = this.waiting;
    this.waiting = [];
    if (group.length === 0) return;
    let results: boolean[] | Promise<boolean[]>;
    try {
      results = this.inbox.accept(group.map((w) => w.event));
    } catch (e) {
      this.failed(group, e);
      return;
    }
    if (!(results instanceof Promise)) return this.settle(group, results);
    this.committing = true;
    results.then(
      (r) => {
        this.committing = false;
        this.settle(group, r);
        this.flush();
      },
      (e: unknown) => {
        this.committing = false;
        this.failed(group, e);
        this.flush();
      },
    );
  }

  private settle(group: Waiting[], results: boolean[]): void {
    this.commits++;
    this.committed += group.length;
    group.forEach((w, i) => w.resolve(results[i] === true));
  }

  private failed(group: Waiting[], e: unknown): void {
    for (const w of group) w.reject(e);
  }
}

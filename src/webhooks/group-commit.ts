/**
 * Group commit: the events that arrive within a few milliseconds share one inbox transaction, so
 * one fsync makes them all durable, and each request is answered only after that commit. One fsync
 * per request would cap the receiver at a few hundred events a second; sharing it is how a 2-core
 * machine answers thousands, every 2xx still a promise kept.
 *
 * The inbox's commit is synchronous (SQLite on this thread): while it runs, new requests wait in
 * the kernel, and they are read in the next turn of the event loop and join the next group. So
 * the group grows with the load by itself; the window only gathers a quiet moment's stragglers.
 */
import type { InboxEvent } from "./inbox.js";

/** The slice of the inbox this needs. */
export interface AcceptingInbox {
  accept(events: InboxEvent[]): boolean[];
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

  /** Commit what is waiting now (also called when the receiver stops). */
  flush(): void {
    if (this.timer) clearTimeout(this.timer);
    this.timer = undefined;
    const group = this.waiting;
    this.waiting = [];
    if (group.length === 0) return;
    let results: boolean[];
    try {
      results = this.inbox.accept(group.map((w) => w.event));
    } catch (e) {
      for (const w of group) w.reject(e);
      return;
    }
    this.commits++;
    this.committed += group.length;
    group.forEach((w, i) => w.resolve(results[i] === true));
  }
}

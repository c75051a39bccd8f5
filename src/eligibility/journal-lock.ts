/**
 * The lock that keeps two census applies off one group's journal: a plain file naming its holder
 * (pid, the process's start time, boot id, host, a random token). It is taken atomically, by a
 * hard link of a complete temp file to the lock's name, which fails when the name exists; no
 * holder ever sees another's half-written record.
 *
 * A lock whose holder is gone (killed, the machine rebooted, its pid reused by another process) is
 * stale. Removing it is done by one process at a time, the one that holds `<lock>.break` (taken
 * the same way), and only if the lock is still the very record it judged stale: two processes that
 * both saw a stale lock can never remove each other's fresh one and both hold the group. A lock is
 * released only by its holder, and only while it is still its own.
 *
 * A holder on another host (a container restarted under a new hostname, the same volume) cannot be
 * asked whether it lives: its holder renews the lock's modification time every
 * {@link LOCK_RENEW_MS} (as the snapshot's run lease is renewed), and a lock of another host not
 * renewed for {@link LOCK_LEASE_MS} is stale.
 */
import { randomUUID } from "node:crypto";
import { linkSync, readFileSync, rmSync, statSync, utimesSync, writeFileSync } from "node:fs";
import { hostname } from "node:os";

/** Who holds a lock; a lock written by an older version holds only `pid`. */
export interface LockHolder {
  readonly pid: number;
  /** The holder's start time in clock ticks since boot (field 22 of /proc/<pid>/stat). */
  readonly start?: string;
  readonly boot?: string;
  readonly host?: string;
  readonly token?: string;
}

/** How often a holder renews its lock (its modification time). */
export const LOCK_RENEW_MS = 30_000;
/** A lock of another host not renewed for this long is stale (ten renewals missed). */
export const LOCK_LEASE_MS = 10 * LOCK_RENEW_MS;

/** Another apply holds the group's journal (exit 75: try again when it is done). */
export class JournalBusyError extends Error {
  readonly code = "CENSUS_BUSY";
}

/** A lock this process holds. */
export class JournalLock {
  constructor(
    readonly path: string,
    private readonly token: string,
  ) {}

  private readonly timer = setInterval(() => this.renew(), LOCK_RENEW_MS);

  /** Renew the lock (its modification time) while it is this process's own; never throws. */
  renew(): void {
    try {
      if (readLock(this.path)?.holder.token === this.token) utimesSync(this.path, new Date(), new Date());
    } catch {
      // A renewal missed: ten in a row before another host may take the lock over.
    }
  }

  /** Remove the lock if it is still this process's own; a lock another process took is left alone. */
  release(): void {
    clearInterval(this.timer);
    if (readLock(this.path)?.holder.token === this.token) rmSync(this.path, { force: true });
  }
}

/**
 * Take the lock at `path`, taking over a stale one; {@link JournalBusyError} when a live process holds it.
 *
 * @example const lock = takeJournalLock("snap.db.census/gp1.journal.jsonl.lock"); try { ... } finally { lock.release() }
 */
export function takeJournalLock(path: string): JournalLock {
  const me: LockHolder = { pid: process.pid, start: procStart(process.pid), boot: bootId(), host: hostname(), token: randomUUID() };
  const tmp = `${path}.${me.token}.tmp`;
  writeFileSync(tmp, JSON.stringify(me), { mode: 0o600, flag: "wx" });
  try {
    for (let attempt = 0; attempt < 10; attempt++) {
      if (linked(tmp, path)) return new JournalLock(path, me.token!);
      const seen = readLock(path);
      if (!seen) continue; // released meanwhile: try again
      if (!stale(seen)) throw busy(path, seen);
      if (!removeStale(path, seen.raw, tmp)) throw new JournalBusyError(`another census apply is taking over the stale lock ${path}; try again when it is done`);
    }
    throw new JournalBusyError(`could not take the lock ${path}: other applies kept taking it; try again`);
  } finally {
    rmSync(tmp, { force: true });
  }
}

/** Remove the stale lock if it is still `raw`, holding `<path>.break` meanwhile; false when another live process is doing it. */
function removeStale(path: string, raw: string, tmp: string): boolean {
  const brk = `${path}.break`;
  if (!linked(tmp, brk)) {
    const breaker = readLock(brk);
    if (!breaker) return true;
    if (!stale(breaker)) return false;
    // A process that died while removing a stale lock (a moment's window): its claim is stale too.
    if (readLock(brk)?.raw === breaker.raw) rmSync(brk, { force: true });
    return true;
  }
  try {
    if (readLock(path)?.raw === raw) rmSync(path, { force: true });
  } finally {
    rmSync(brk, { force: true });
  }
  return true;
}

function linked(from: string, to: string): boolean {
  try {
    linkSync(from, to);
    return true;
  } catch (e) {
    if ((e as NodeJS.ErrnoException).code === "EEXIST") return false;
    throw e;
  }
}

function busy(path: string, seen: SeenLock): JournalBusyError {
  const h = seen.holder;
  const elsewhere = h.host !== undefined && h.host !== hostname();
  const where = elsewhere ? ` on ${h.host}, renewed ${new Date(seen.mtimeMs).toISOString()}` : "";
  const after = elsewhere ? `; a lock of another host not renewed for ${LOCK_LEASE_MS / 60_000} minutes is taken over` : "";
  return new JournalBusyError(`another census apply (pid ${h.pid}${where}) is working on this group (${path}); try again when it is done${after}`);
}

interface SeenLock {
  readonly raw: string;
  readonly holder: LockHolder;
  readonly mtimeMs: number;
}

/** The lock's record (undefined when there is none); a record that says nothing readable holds pid 0, which is stale. */
export function readLock(path: string): SeenLock | undefined {
  let raw: string;
  let mtimeMs: number;
  try {
    raw = readFileSync(path, "utf8");
    mtimeMs = statSync(path).mtimeMs;
  } catch (e) {
    if ((e as NodeJS.ErrnoException).code === "ENOENT") return undefined;
    throw e;
  }
  return { raw, mtimeMs, holder: parseHolder(raw) };
}

function parseHolder(raw: string): LockHolder {
  const text = raw.trim();
  if (/^\d+$/.test(text)) return { pid: Number(text) };
  try {
    const v = JSON.parse(text) as Record<string, unknown>;
    const s = (x: unknown) => (typeof x === "string" ? x : undefined);
    const pid = typeof v.pid === "number" && Number.isInteger(v.pid) && v.pid > 0 ? v.pid : 0;
    return { pid, ...strip({ start: s(v.start), boot: s(v.boot), host: s(v.host), token: s(v.token) }) };
  } catch {
    return { pid: 0 };
  }
}

const strip = <T extends object>(o: T): Partial<T> => Object.fromEntries(Object.entries(o).filter(([, v]) => v !== undefined)) as Partial<T>;

/**
 * Whether the lock's holder is gone: its pid is dead, the machine rebooted since (another boot id),
 * or the pid now belongs to another process (another start time; for a record with no start time,
 * a process started after the lock was written). A holder on another host cannot be checked: its
 * lock is stale once it was not renewed for {@link LOCK_LEASE_MS}.
 */
export function stale(seen: SeenLock, now = Date.now()): boolean {
  const h = seen.holder;
  if (h.host !== undefined && h.host !== hostname()) return now - seen.mtimeMs > LOCK_LEASE_MS;
  if (!(h.pid > 0) || !alive(h.pid)) return true;
  const boot = bootId();
  if (h.boot !== undefined && boot !== undefined && h.boot !== boot) return true;
  const start = procStart(h.pid);
  if (start === undefined) return false;
  if (h.start !== undefined) return h.start !== start;
  const startedMs = startMs(start);
  return startedMs !== undefined && startedMs > seen.mtimeMs + 2_000;
}

function alive(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch (e) {
    return (e as NodeJS.ErrnoException).code === "EPERM";
  }
}

/** Field 22 of /proc/<pid>/stat (after the command name, which may hold spaces and parentheses); undefined off Linux. */
export function procStart(pid: number): string | undefined {
  try {
    const stat = readFileSync(`/proc/${pid}/stat`, "utf8");
    return stat.slice(stat.lastIndexOf(")") + 2).split(" ")[19];
  } catch {
    return undefined;
  }
}

function bootId(): string | undefined {
  try {
    return readFileSync("/proc/sys/kernel/random/boot_id", "utf8").trim() || undefined;
  } catch {
    return undefined;
  }
}

/** A start time in ticks since boot as epoch ms (boot time from /proc/stat; USER_HZ is 100 on Linux). */
function startMs(ticks: string): number | undefined {
  try {
    const btime = /^btime (\d+)$/m.exec(readFileSync("/proc/stat", "utf8"))?.[1];
    return btime === undefined ? undefined : Number(btime) * 1000 + (Number(ticks) / 100) * 1000;
  } catch {
    return undefined;
  }
}

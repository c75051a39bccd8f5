/**
 * When a job fires, in its time zone, across daylight-saving changes. node-cron matches instants
 * against the zone's wall clock, so a `30 2 * * *` job has no fire on the spring-forward night
 * (02:30 never shows) and a `30 1 * * *` job fires twice on the fall-back night (01:30 shows
 * twice). This follows cron's rule instead (Vixie cron, cronie): for a job at a fixed time (its
 * minute and hour fields do not start with `*`), a time in the gap runs once at the first valid
 * time after it, and a repeated time runs once, the first time it shows. A job that runs every
 * hour or more often (`15 * * * *`, `*\/5 2 * * *`) follows the clock as it is, as in cron: it
 * fires at each real hour the wall clock reaches its minute.
 *
 * node-cron is used for what it does without a zone: reading the expression and matching a wall
 * time (a UTC instant holding the local fields), so the expression language is the same.
 */
import { createTask, parse, type ScheduledTask } from "node-cron";

/** A scheduled time: the instant, and the local time it stands for when the clocks moved it. */
export interface Fire {
  readonly at: Date;
  /** Set when the job's local time did not exist that day, e.g. `2026-03-08 02:30`. */
  readonly movedFrom?: string;
}

type Expr = Pick<{ schedule: string; timezone: string }, "schedule" | "timezone">;

const DAY = 86_400_000;

/** The first fire strictly after `after`, within 400 days, or null. */
export function nextFireAfter(job: Expr, after: Date): Fire | null {
  const c = compile(job);
  try {
    const start = wallDay(after.getTime(), job.timezone) - DAY;
    for (let d = 0; d <= 401; d++) {
      const hit = firesOnDay(c, start + d * DAY).find((f) => f.at.getTime() > after.getTime());
      if (hit) return hit;
    }
    return null;
  } finally {
    void c.wall.destroy();
  }
}

/** The last fire at or before `now`, within 45 days, or null. */
export function lastFireAtOrBefore(job: Expr, now: Date): Fire | null {
  const c = compile(job);
  try {
    const start = wallDay(now.getTime(), job.timezone) + DAY;
    for (let d = 0; d <= 46; d++) {
      const hit = firesOnDay(c, start - d * DAY).filter((f) => f.at.getTime() <= now.getTime()).pop();
      if (hit) return hit;
    }
    return null;
  } finally {
    void c.wall.destroy();
  }
}

/** Describes a moved fire for the log: what did not exist, and when it ran instead. */
export function movedText(fire: Fire, timezone: string): string | undefined {
  if (!fire.movedFrom) return undefined;
  const to = wallText(fire.at.getTime() + offsetMs(fire.at.getTime(), timezone));
  return `${fire.movedFrom} does not exist in ${timezone} (the clocks went forward): run at ${to.slice(11)}, the first valid time after it`;
}

/** A time as people read it in a job's zone: `2026-11-22 03:00 UTC` (seconds only when not 0). */
export function localText(at: Date, timezone: string): string {
  const wall = wallText(at.getTime() + offsetMs(at.getTime(), timezone));
  return `${wall.endsWith(":00") ? wall.slice(0, 16) : wall} ${timezone}`;
}

interface Compiled {
  readonly tz: string;
  readonly wall: ScheduledTask;
  readonly seconds: number[];
  readonly minutes: number[];
  readonly hours: number[];
  /** Fixed-time job: cron's daylight-saving rule applies (see the module comment). */
  readonly fixed: boolean;
}

function compile(job: Expr): Compiled {
  const f = parse(job.schedule);
  const raw = job.schedule.trim().split(/\s+/);
  const [minute, hour] = raw.length === 6 ? [raw[1], raw[2]] : [raw[0], raw[1]];
  const fixed = raw.length === 1 ? !/^@hourly$/i.test(raw[0]!) : !minute!.startsWith("*") && !hour!.startsWith("*");
  const asc = (xs: number[]) => [...xs].sort((a, b) => a - b);
  return { tz: job.timezone, wall: createTask(job.schedule, () => undefined, { timezone: "UTC" }), seconds: asc(f.second), minutes: asc(f.minute), hours: asc(f.hour), fixed };
}

/**
 * The fires of one local day (`day`: its midnight as a UTC wall instant), in time order, each
 * instant once.
 */
function firesOnDay(c: Compiled, day: number): Fire[] {
  const [h0, m0, s0] = [c.hours[0]!, c.minutes[0]!, c.seconds[0]!];
  if (!c.wall.match(new Date(day + ((h0 * 60 + m0) * 60 + s0) * 1000))) return [];
  const out = new Map<number, Fire>();
  const add = (f: Fire) => {
    const had = out.get(f.at.getTime());
    if (!had || (had.movedFrom && !f.movedFrom)) out.set(f.at.getTime(), f);
  };
  for (const h of c.hours) {
    for (const m of c.minutes) {
      for (const s of c.seconds) {
        const wall = day + ((h * 60 + m) * 60 + s) * 1000;
        const instants = instantsOf(wall, c.tz);
        if (instants.length === 0) {
          if (c.fixed) add({ at: new Date(gapEnd(wall, c.tz)), movedFrom: wallText(wall).slice(0, s ? 19 : 16) });
        } else for (const at of c.fixed ? instants.slice(0, 1) : instants) add({ at: new Date(at) });
      }
    }
  }
  return [...out.values()].sort((a, b) => a.at.getTime() - b.at.getTime());
}

/** The instants whose wall time in `tz` is `wall`: none in a gap, two in a repeated hour. */
function instantsOf(wall: number, tz: string): number[] {
  const offsets = new Set([offsetMs(wall - DAY / 2, tz), offsetMs(wall + DAY / 2, tz)]);
  return [...offsets].map((o) => wall - o).filter((t) => offsetMs(t, tz) === wall - t).sort((a, b) => a - b);
}

/** The first instant after the gap that swallowed `wall`: when the clocks went forward (to the second). */
function gapEnd(wall: number, tz: string): number {
  const [a, b] = [offsetMs(wall - DAY / 2, tz), offsetMs(wall + DAY / 2, tz)];
  let [lo, hi] = [wall - Math.max(a, b), wall - Math.min(a, b)];
  const after = offsetMs(hi, tz);
  while (hi - lo > 1000) {
    const mid = Math.floor((lo + hi) / 2000) * 1000;
    if (offsetMs(mid, tz) === after) hi = mid;
    else lo = mid;
  }
  return hi;
}

const formatters = new Map<string, Intl.DateTimeFormat>();

/** The zone's offset from UTC at instant `t`, in ms (wall = t + offset). */
function offsetMs(t: number, tz: string): number {
  let f = formatters.get(tz);
  if (!f) {
    f = new Intl.DateTimeFormat("en-US", { timeZone: tz, hourCycle: "h23", year: "numeric", month: "numeric", day: "numeric", hour: "numeric", minute: "numeric", second: "numeric" });
    formatters.set(tz, f);
  }
  const p = Object.fromEntries(f.formatToParts(new Date(t)).map((x) => [x.type, Number(x.value)])) as Record<string, number>;
  const wall = Date.UTC(p["year"]!, p["month"]! - 1, p["day"]!, p["hour"]!, p["minute"]!, p["second"]!);
  return wall - Math.floor(t / 1000) * 1000;
}

/** Local midnight of the day holding instant `t`, as a UTC wall instant. */
function wallDay(t: number, tz: string): number {
  return Math.floor((t + offsetMs(t, tz)) / DAY) * DAY;
}

function wallText(wall: number): string {
  return new Date(wall).toISOString().slice(0, 19).replace("T", " ");
}

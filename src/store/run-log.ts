import type { Database } from "better-sqlite3";
import { hostname } from "node:os";

export const RunStatuses = ["running", "succeeded", "failed"] as const;
export type RunStatus = (typeof RunStatuses)[number];

export interface RunRow {
  run_id: number;
  job: string;
  status: RunStatus;
  started_at: string;
  finished_at: string | null;
  options: string;
  resumed_from: number | null;
  pid: number | null;
  host: string | null;
  error: string | null;
  /** JSON array of the resources that were empty when the run's chain began. */
  fresh: string;
}

/** Whether a process id is alive on this host (signal 0 checks without signalling). */
function alive(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch (e) {
    return (e as NodeJS.ErrnoException).code === "EPERM";
  }
}

/**
 * Mark runs whose process died (kill -9, power loss) as failed, so that the run history never
 * shows a run "running" forever and the next run can resume its walk. A run on another host is
 * left alone: we cannot tell whether it is alive.
 */
export function markDeadRuns(db: Database, now: string): number[] {
  const running = db.prepare("SELECT run_id, pid, host FROM _runs WHERE status = 'running'").all() as Pick<RunRow, "run_id" | "pid" | "host">[];
  const dead = running.filter((r) => r.host === hostname() && r.pid !== null && r.pid !== process.pid && !alive(r.pid));
  const mark = db.prepare("UPDATE _runs SET status = 'failed', finished_at = ?, error = ? WHERE run_id = ?");
  for (const r of dead) mark.run(now, `the process (pid ${r.pid}) ended before the run finished`, r.run_id);
  return dead.map((r) => r.run_id);
}

/** Another live process is running a sync on this snapshot. */
export function liveRun(db: Database): RunRow | undefined {
  const rows = db.prepare("SELECT * FROM _runs WHERE status = 'running'").all() as RunRow[];
  return rows.find((r) => r.pid !== process.pid && (r.host !== hostname() || (r.pid !== null && alive(r.pid))));
}

export function listRuns(db: Database, limit = 50): Record<string, unknown>[] {
  return db.prepare("SELECT * FROM runs ORDER BY run_id DESC LIMIT ?").all(limit) as Record<string, unknown>[];
}

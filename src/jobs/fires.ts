/**
 * Who runs a fire. Each scheduled time of a job (its slot) is claimed in the snapshot
 * (`_job_fires`, primary key job and slot) by the scheduler that runs it: a second scheduler on the
 * same snapshot finds the claim and skips that fire, so a job runs once per fire however many
 * schedulers watch the file. The row keeps how the fire ended (`succeeded`, `failed`,
 * `interrupted`, `skipped: ...`), and the run it made.
 */
import type { Database } from "better-sqlite3";
import { hostname } from "node:os";

export type FireReason = "scheduled" | "missed";

/** Claim `job` at `slot`: true when this process got it, false when another scheduler has it. */
export function claimFire(db: Database, job: string, slot: Date, reason: FireReason, now = new Date()): boolean {
  const r = db
    .prepare("INSERT OR IGNORE INTO _job_fires (job, slot, reason, claimed_at, host, pid) VALUES (?, ?, ?, ?, ?, ?)")
    .run(job, slot.toISOString(), reason, now.toISOString(), hostname(), process.pid);
  return r.changes === 1;
}

export function endFire(db: Database, job: string, slot: Date, outcome: string, runId: number | null, now = new Date()): void {
  db.prepare("UPDATE _job_fires SET outcome = ?, run_id = ?, finished_at = ? WHERE job = ? AND slot = ?").run(outcome, runId, now.toISOString(), job, slot.toISOString());
}

/** When the job last succeeded (the start of its last successful run), or undefined. */
export function lastSuccess(db: Database, job: string): Date | undefined {
  const at = db.prepare("SELECT MAX(started_at) FROM _runs WHERE job = ? AND status = 'succeeded'").pluck().get(job) as string | null;
  return at ? new Date(at) : undefined;
}

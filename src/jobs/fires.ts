/**
 * Who runs a fire. Each scheduled time of a job (its slot) is claimed in the snapshot
 * (`_job_fires`, primary key job and slot) by the scheduler that runs it: a second scheduler on the
 * same snapshot finds the claim and skips that fire, so a job runs once per fire however many
 * schedulers watch the file. The row keeps how the fire ended (`succeeded`, `failed`, `failed: why`
 * when the fire threw before its run ended, `interrupted`, `skipped: ...`), and the run it made. The table keeps {@link FIRES_KEPT_DAYS} days:
 * each claim forgets older fires (the run history, `_runs`, keeps the runs themselves).
 */
import type { Database } from "better-sqlite3";
import { hostname } from "node:os";

export type FireReason = "scheduled" | "missed";

/** How long a fire's claim is kept: far longer than any scheduler could still be about to take it. */
export const FIRES_KEPT_DAYS = 90;

/** Claim `job` at `slot`: true when this process got it, false when another scheduler has it. */
export function claimFire(db: Database, job: string, slot: Date, reason: FireReason, now = new Date()): boolean {
  db.prepare("DELETE FROM _job_fires WHERE slot < ?").run(new Date(now.getTime() - FIRES_KEPT_DAYS * 86_400_000).toISOString());
  const r = db
    .prepare("INSERT OR IGNORE INTO _job_fires (job, slot, reason, claimed_at, host, pid) VALUES (?, ?, ?, ?, ?, ?)")
    .run(job, slot.toISOString(), reason, now.toISOString(), hostname(), process.pid);
  return r.changes === 1;
}

export function endFire(db: Database, job: string, slot: Date, outcome: string, runId: number | null, now = new Date()): void {
  db.prepare("UPDATE _job_fires SET outcome = ?, run_id = ?, finished_at = ? WHERE job = ? AND slot = ?").run(outcome, runId, now.toISOString(), job, slot.toISOString());
}

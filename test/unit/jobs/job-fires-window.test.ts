/**
 * `_job_fires` keeps a bounded window: claiming a fire forgets the fires whose slot is more than 90
 * days before it, so an hourly job does not grow the snapshot by 8,760 rows a year for ever. The
 * clock is a fake one (each claim's `now`), the snapshot a real file.
 */
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterEach, describe, expect, it } from "vitest";
import { claimFire, endFire } from "../../../src/jobs/fires.js";
import { openDatabase } from "../../../src/store/file/database.js";

let dir: string | undefined;
afterEach(() => {
  if (dir) rmSync(dir, { recursive: true, force: true });
  dir = undefined;
});

const DAY = 86_400_000;

describe("the fire claims' window", () => {
  it("a claim prunes the fires more than 90 days old, of every job, and keeps the rest", () => {
    dir = mkdtempSync(join(tmpdir(), "bsync-fires-"));
    const db = openDatabase(join(dir, "snap.db"));
    try {
      const start = Date.parse("2026-01-01T02:00:00Z");
      // A daily fire of two jobs for 200 days, each claimed and ended at its own time.
      for (let d = 0; d < 200; d++) {
        const at = new Date(start + d * DAY);
        for (const job of ["a", "b"]) {
          expect(claimFire(db, job, at, "scheduled", at)).toBe(true);
          endFire(db, job, at, "succeeded", null, at);
        }
      }
      const last = new Date(start + 199 * DAY);
      const slots = db.prepare("SELECT slot FROM _job_fires WHERE job = ? ORDER BY slot").pluck();
      // Kept: the slots from 90 days before the last claim (day 109) to it: 91 per job.
      for (const job of ["a", "b"]) {
        const kept = slots.all(job) as string[];
        expect(kept[0], job).toBe(new Date(last.getTime() - 90 * DAY).toISOString());
        expect(kept.at(-1), job).toBe(last.toISOString());
        expect(kept, job).toHaveLength(91);
      }
      // A fire still in the window is still claimed: a second scheduler cannot take it again.
      expect(claimFire(db, "a", new Date(last.getTime() - 30 * DAY), "missed", last)).toBe(false);
    } finally {
      db.close();
    }
  });
});

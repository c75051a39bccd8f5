/**
 * The job registry: every scheduled job, one per file in this folder. `benefits-sync jobs` lists
 * them; the config file's `jobs` section enables, disables and reschedules them by name.
 */
import type { JobDefinition } from "../src/jobs/job.js";
import dailyGroupsDesigns from "./daily-groups-designs.js";
import hourlyMemberSync from "./hourly-member-sync.js";
import monthlyReconcile from "./monthly-reconcile.js";
import nightlyClaimsExport from "./nightly-claims-export.js";
import weeklyFullWalk from "./weekly-full-walk.js";

export const JOBS: readonly JobDefinition[] = [nightlyClaimsExport, hourlyMemberSync, dailyGroupsDesigns, weeklyFullWalk, monthlyReconcile];

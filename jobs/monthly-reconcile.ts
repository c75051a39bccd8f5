import { defineJob } from "../src/jobs/job.js";

/**
 * The month's reconciliation report: the snapshot as of last month's first day against this
 * month's, into `reconcile-YYYY-MM/` (the month reconciled) in each of the job's folder sinks.
 */
export default defineJob({
  name: "monthly-reconcile",
  description: "last month's reconciliation report (its first day against this month's), on the 1st at 06:00",
  schedule: "0 6 1 * *",
  timezone: "UTC",
  kind: "reconcile",
  resources: [],
});

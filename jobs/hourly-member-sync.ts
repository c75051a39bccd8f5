import { defineJob } from "../src/jobs/job.js";

/** Members and their coverages, every hour: eligibility moves faster than anything else. */
export default defineJob({
  name: "hourly-member-sync",
  description: "members and their coverages, every hour at minute 15",
  schedule: "15 * * * *",
  timezone: "UTC",
  resources: ["members"],
});

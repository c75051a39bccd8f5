import { defineJob } from "../src/jobs/job.js";

/** Plan designs and groups with their plans, once a day: they change rarely. */
export default defineJob({
  name: "daily-groups-designs",
  description: "plan designs, and groups with their plans, every day at 01:30",
  schedule: "30 1 * * *",
  timezone: "UTC",
  resources: ["designs", "groups"],
});

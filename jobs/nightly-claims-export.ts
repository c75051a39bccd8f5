import { defineJob } from "../src/jobs/job.js";

/** The nightly claims export: groups, then claims per group over the rolling window; changes to the configured sinks. */
export default defineJob({
  name: "nightly-claims-export",
  description: "claims per group over the rolling service-date window, every night at 02:00; the changes go to the configured sinks",
  schedule: "0 2 * * *",
  timezone: "UTC",
  resources: ["groups", "claims"],
});

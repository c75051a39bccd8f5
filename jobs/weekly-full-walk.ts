import { defineJob } from "../src/jobs/job.js";

/** Everything, once a week, when the service is quiet: proves deletes across every resource. */
export default defineJob({
  name: "weekly-full-walk",
  description: "every resource (designs, groups, members, claims), Sundays at 03:00",
  schedule: "0 3 * * 0",
  timezone: "UTC",
  resources: ["designs", "groups", "members", "claims"],
});

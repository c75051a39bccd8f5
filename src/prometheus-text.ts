/**
 * The Prometheus text format as benefits-sync writes it: a metric's `# HELP` and `# TYPE` lines
 * and a label value escaped. Shared by the scheduler's textfile (jobs/telemetry.ts) and the
 * webhook receiver's (webhooks/counters.ts): the receiver runs beside the scheduler and imports
 * nothing of it.
 *
 * @example metric("job_last_run_succeeded", "1 when ...") + `benefits_sync_job_last_run_succeeded{job="${label(name)}"} 1\n`
 */

/** The `# HELP` and `# TYPE` lines of `benefits_sync_<name>`. */
export const metric = (name: string, help: string, type: "gauge" | "counter" = "gauge") => `# HELP benefits_sync_${name} ${help}\n# TYPE benefits_sync_${name} ${type}\n`;

/** A label value inside its double quotes: backslash, double quote and newline escaped. */
export const label = (v: string) => v.replace(/\\/g, "\\\\").replace(/"/g, '\\"').replace(/\n/g, "\\n");

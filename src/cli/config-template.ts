/**
 * The config file `benefits-sync init` writes: every setting a team edits in the first week, each
 * with a comment saying what it does, in the format the loader reads (JSON with comments). The
 * jobs come from the registry, so a new job file appears here without a second list. The API key
 * is never written: the file names the variable it comes from.
 */
import { JOBS } from "../../jobs/index.js";
import type { JobDefinition } from "../jobs/job.js";

/** Written when no URL is given: `.invalid` never resolves, so nothing is called by mistake. */
export const PLACEHOLDER_URL = "https://benefits-service.example.invalid";

export interface TemplateSettings {
  readonly baseUrl: string;
  readonly db: string;
}

/**
 * @example configTemplate({ baseUrl: "https://svc.example.com", db: "./benefits-sync.db" }) // '// benefits-sync configuration ...'
 */
export function configTemplate(s: TemplateSettings, jobs: readonly JobDefinition[] = JOBS): string {
  const q = (v: unknown) => JSON.stringify(v);
  const jobLines = jobs.map((j, i) => {
    const entry = `{ "enabled": ${q(j.enabledByDefault ?? true)}, "schedule": ${q(j.schedule)}, "timezone": ${q(j.timezone ?? "UTC")} }`;
    return [`    // ${j.description}`, `    ${q(j.name)}: ${entry}${i < jobs.length - 1 ? "," : ""}`].join("\n");
  });
  return `// benefits-sync configuration, written by \`benefits-sync init\`.
// JSON with comments. After an edit: benefits-sync config check
// Environment variables win over this file, and command-line flags over both.
{
  // The service's base URL. The API key is not in this file and must never be: it is read
  // from the environment variable BENEFITS_API_KEY (keys are per environment).
  "baseUrl": ${q(s.baseUrl)},

  // The SQLite snapshot (created on the first sync, mode 0600), relative to the directory
  // benefits-sync runs in. BENEFITS_DB or --db override it.
  "db": ${q(s.db)},

  // Where changes go after each successful sync: one folder per run, named by the run id in
  // 8 digits (DIR/00000010/ for run 10), as csv, jsonl or parquet.
  // A Postgres warehouse: { "type": "postgres", "urlEnv": "WAREHOUSE_URL" }.
  "sinks": {
    "deltas": { "type": "folder", "dir": "./deltas", "format": "csv" }
  },

  // The scheduled jobs (\`benefits-sync jobs\`, \`benefits-sync schedule\`). A schedule is cron:
  // minute hour day month weekday, read in the job's IANA time zone.
  "jobs": {
${jobLines.join("\n")}
  }
}
`;
}

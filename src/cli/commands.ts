/**
 * The command table. `--help` is generated from it, and each command's module is imported only
 * when that command runs, so `benefits-sync --help` does not load SQLite or undici. The webhook
 * commands are in commands-webhooks.ts, their shape in command-spec.ts.
 */
import { MetricsOptions, type CommandSpec } from "./command-spec.js";
import { WEBHOOK_COMMANDS } from "./commands-webhooks.js";

export type { CommandSpec, OptionSpec } from "./command-spec.js";

export const COMMANDS: readonly CommandSpec[] = [
  {
    name: "doctor",
    summary: "check the key and each read endpoint once: what works, what is forbidden, what failed",
    description:
      "Check the key, then call each read endpoint of the service once and print a table of what works, what is " +
      "forbidden (with the advice to give the service operator) and what failed. Prints no data. Exit 0 when every " +
      "check passes, 1 otherwise.",
    options: [],
    load: () => import("./commands/doctor.js"),
  },
  {
    name: "init",
    summary: "write a commented config file (never over an existing one), check it, then run doctor's checks",
    description:
      "Write PATH (default ./benefits-sync.config.json, or --config) with the service URL (--base-url, else " +
      "BENEFITS_BASE_URL, else a placeholder to edit), the snapshot (--db), one folder sink and the jobs with their " +
      "schedules, each explained in a comment. The API key is never written: it comes from BENEFITS_API_KEY. An " +
      "existing file is never replaced (exit 2, the file untouched). Then the file is checked as every command checks " +
      "it, and doctor's checks run against the service when the URL and the key are there; what is left to do is " +
      "printed last. Exit 0 when the file was written, 2 when nothing was.",
    argument: { name: "path", description: "the file to write (default ./benefits-sync.config.json)", optional: true },
    options: [],
    load: () => import("./commands/init.js"),
  },
  {
    name: "config check",
    summary: "check a config file as sync, jobs and schedule do at load: every problem with its file and key",
    description:
      "Check FILE (default ./benefits-sync.config.json, or --config) with the environment, exactly as every command " +
      "checks its configuration at load: the keys and their values, the jobs (names, cron schedules, time zones, " +
      "sinks), the sinks (a urlEnv that is set, a fromRun that fits the snapshot). Each problem on one line on stderr " +
      "with the file and the key, exit 2; otherwise a short summary, exit 0. The API key is only said to be set or not.",
    argument: { name: "file", description: "the config file (default ./benefits-sync.config.json)", optional: true },
    options: [],
    load: () => import("./commands/config-check.js"),
  },
  {
    name: "sync",
    summary: "one run: walk the service, diff against the snapshot, record the changes",
    options: [
      { flags: "--resources <list>", description: "comma-separated: designs,groups,members,claims (default: all)", parse: "list" },
      {
        flags: "--claims-since <date>",
        description: "first claim service date to walk (YYYY-MM-DD; default: today minus resources.claims.lookbackDays, 90)",
        parse: "date",
      },
      { flags: "--claims-until <date>", description: "last claim service date to walk (YYYY-MM-DD; default: today)", parse: "date" },
      {
        flags: "--out <dir>",
        description: "after a successful run, deliver every change DIR has not received yet as DIR/<run_id>/ (the id zero-padded to 8 digits); a failed delivery exits 1 and the next run retries it",
      },
      { flags: "--format <format>", description: "the files --out writes: csv (default), jsonl or parquet", parse: "format" },
      { flags: "--layout <layout>", description: "folder (default): DIR/<run>/; tables: Parquet tables, DIR/<resource>/run_id=<run>/part-00000.parquet (docs/lake.md)", parse: "layout" },
      {
        flags: "--from-run <n>",
        description: "start a new --out (or --sink) output at run N: the runs before it are never sent there (recorded in the snapshot); default: every run from the first",
        parse: "positiveInt",
      },
      {
        flags: "--sink <url-or-name>",
        description: "after a successful run, load every change the warehouse lacks into it (postgres://user@host:5432/db?schema=benefits_sync, or a sink named in the config file); sinks in the config file receive every run anyway",
      },
      { flags: "--dry-run", description: "walk and diff, but record nothing" },
      { flags: "--allow-deletes", description: "apply deletions beyond the delete guard's limits" },
      { flags: "--pii <mode>", description: "token (default) or keep: store plain SSNs only when asked for by name" },
    ],
    load: () => import("./commands/sync.js"),
  },
  {
    name: "runs",
    summary: "the run history; --abandon N ends a run that is known to be dead",
    description:
      "The run history, newest first. A run holds the snapshot by a lease it renews while it works; a run that was " +
      "killed is marked failed by the next run once its lease (2 minutes) lapses. `--abandon N` ends run N now, when you " +
      "know its process is gone: it is recorded failed (its walk can be resumed) and the snapshot is free. Exit 2 when " +
      "run N does not exist or is not running.",
    options: [
      { flags: "--limit <n>", description: "show the last N runs", parse: "positiveInt" },
      { flags: "--abandon <run>", description: "record running run N as failed (only when its process is known to be gone)", parse: "positiveInt" },
    ],
    load: () => import("./commands/runs.js"),
  },
  {
    name: "export",
    summary: "(re)write one run's deltas: the same run exported twice gives the same bytes",
    description:
      "Write exactly the changes run N recorded (any finished run, a failed one included) as DIR/N/: one file per " +
      "resource (and per child list in CSV and Parquet), and manifest.json with each file's row count and SHA-256. The " +
      "same run exported twice gives the same bytes. It does not count as a delivery: what sync --out delivers is " +
      "unchanged. With --sink, load into a Postgres warehouse every finished run up to N that it lacks, in order (a run " +
      "it has is never applied twice), and record the delivery. --out s3://BUCKET/PREFIX uploads the same files, the " +
      "manifest last (credentials from the AWS environment). --state and --history write every view as of run N, or " +
      "every version up to it, instead. Exit 0 when written, 1 when the folder, the bucket or the warehouse could not be " +
      "written, 2 for bad usage (an unknown run, format, sink or bucket).",
    options: [
      { flags: "--run <n>", description: "the run to export (see `benefits-sync runs`)", parse: "positiveInt" },
      { flags: "--out <dir>", description: "write under DIR/<run_id>/ (8 digits; DIR is created if missing; its parent must exist), or s3://BUCKET/PREFIX" },
      { flags: "--format <format>", description: "csv (default), jsonl or parquet", parse: "format" },
      { flags: "--layout <layout>", description: "folder (default): DIR/<run>/; tables: Parquet tables, DIR/<resource>/run_id=<run>/part-00000.parquet (docs/lake.md)", parse: "layout" },
      { flags: "--sink <url-or-name>", description: "load into a warehouse instead: postgres://... or a sink named in the config file" },
      { flags: "--from-run <n>", description: "with --out: every run from N to --run, each its own folder; with --sink: a new warehouse starts at run N (the runs before it are never loaded)", parse: "positiveInt" },
      { flags: "--state", description: "write every view's rows as of --run (default: the latest that succeeded) as DIR/state-<run>/" },
      { flags: "--history", description: "write every version up to --run (valid_from_run, valid_to_run, valid_from, valid_to, is_current, is_deleted) as DIR/history-<run>/" },
    ],
    load: () => import("./commands/export.js"),
  },
  {
    name: "reconcile",
    summary: "compare two periods: membership movement (834 codes), eligibility files, claims, consistency checks",
    description:
      "Compare the snapshot as of two runs, A (--from) and B (--to): each a run id or a date YYYY-MM-DD meaning the last " +
      "successful run that started on or before it (UTC); a failed or running run is refused. Writes into DIR: " +
      "membership.csv (coverages by group, plan and status at A and B with the movement between them), " +
      "eligibility-changes.csv (one row per member-coverage change: 021 addition, 024 termination or deletion, 025 " +
      "reinstatement, 001 change, with its effective date), eligibility-audit.csv (030: every coverage as of B), claims.csv " +
      "(counts and exact billed, allowed and paid sums by group and status), claim-transitions.csv, findings.csv (the " +
      "consistency checks as of B), summary.md, report.html (one self-contained page with charts), report.json and " +
      "manifest.json. The files appear together when all are complete. The report checks that A plus the movement " +
      "equals B, for members, every membership cell and every claim status, and shows it. Reads the snapshot only (never " +
      "the service), in one read transaction: a sync may run meanwhile. Exit 0 when written and the arithmetic holds, 1 " +
      "when it does not hold (the report is written, saying so) or DIR cannot be written, 2 for bad usage.",
    options: [
      { flags: "--from <run-or-date>", description: "period A: a run id, or a date YYYY-MM-DD (the last successful run on or before it)", parse: "runOrDate" },
      { flags: "--to <run-or-date>", description: "period B: a run id, or a date YYYY-MM-DD", parse: "runOrDate" },
      { flags: "--out <dir>", description: "write the report into DIR (created if missing; its parent must exist)" },
      { flags: "--as-of <date>", description: "judge groups as terminated when their plan year ended before this date (default: the date run B started)", parse: "date" },
    ],
    load: () => import("./commands/reconcile.js"),
  },
  {
    name: "prune",
    summary: "remove history no kept run needs: --keep-runs N or --before DATE; current versions never",
    description:
      "Remove the runs before a bound, the versions that ended before the first run kept, and each run's counts, walk " +
      "and quarantine; then give the freed pages back to the disk (incremental vacuum) and say how much. --keep-runs N " +
      "keeps the N newest syncs that succeeded (the webhook worker's runs between them are kept with them); --before " +
      "DATE keeps the runs that started on or after DATE (UTC). The last successful sync, a running run and the runs " +
      "of a resumed walk are always kept, so every view answers as before as of every kept run. Refused, removing " +
      "nothing, while an output (a configured sink, or one in the delivery ledger) has not received a run it would " +
      "remove, or the reconciliation job's next report needs one; each is named. A removed run stays listed by `runs` " +
      "(status pruned), and reconcile and export say when a run asked for was pruned. Exit 0 pruned or nothing to prune, " +
      "2 bad usage or held back, 75 the snapshot's write lock stayed taken (run it again: it goes on).",
    options: [
      { flags: "--keep-runs <n>", description: "keep the N newest successful syncs and every run after the oldest of them", parse: "positiveInt" },
      { flags: "--before <date>", description: "remove the runs that started before DATE (YYYY-MM-DD, UTC)", parse: "date" },
      { flags: "--dry-run", description: "say what would be removed (or what holds it back); change nothing" },
      { flags: "--forget-output <ids>", description: "outputs of the delivery ledger no longer used (as a held prune names them, comma-separated): their receipts go, and they hold nothing back", parse: "list" },
      { flags: "--vacuum", description: "then rewrite the whole file (VACUUM): gives back the room left inside pages too; needs free disk of twice the file and no reader" },
    ],
    load: () => import("./commands/prune.js"),
  },
  {
    name: "jobs",
    summary: "the scheduled jobs: schedule, enabled, next fire time, last run",
    description:
      "List each scheduled job (jobs/, with the config file's `jobs` settings): its cron schedule and time zone, whether " +
      "it is enabled, its next fire time, and its last run's status, start and duration. Reads the snapshot, never the " +
      "service. With --json, one object: {jobs: [...]}.",
    options: [],
    load: () => import("./commands/jobs.js"),
  },
  {
    name: "run",
    summary: "run one scheduled job now (its resources, window and sinks, recorded under its name)",
    description:
      "Run the job JOB now, as the scheduler would: its resources, its rolling claims window (from this run's start), its " +
      "sinks, recorded in the run history under its name, with its heartbeat pings and the textfile. Exit 0 when the run " +
      "succeeded and every delivery landed, 1 when it failed, 2 for an unknown job or bad configuration, 75 when another " +
      "run holds the snapshot (nothing was changed; try again later), 130 or 143 when stopped by SIGINT or SIGTERM (the " +
      "run is recorded as interrupted and the next run resumes it).",
    argument: { name: "job", description: "the job's name (see `benefits-sync jobs`)" },
    options: [],
    load: () => import("./commands/run.js"),
  },
  {
    name: "schedule",
    summary: "run the enabled jobs on their schedules until stopped (JSON-lines log on stdout)",
    description:
      "Run every enabled job on its cron schedule, in its time zone, until SIGINT or SIGTERM. A job never overlaps " +
      "itself; each fire is claimed in the snapshot, so a second scheduler on the same file skips it; a job that finds " +
      "the snapshot held by another run waits (schedule.waitForSnapshotMs, 10 minutes) and then skips that fire, saying " +
      "so. At start, one log line per job says what runs and why, or when it fires next: a job whose fire fell while no " +
      "scheduler ran on the snapshot (by the scheduler's own record in it) runs once, however many fires it missed; " +
      "the first start on a snapshot runs nothing. --run-missed runs, at start, each job whose last success is older " +
      "than its latest due time, even if no scheduler was running then (a job never run included). Logs one JSON object " +
      "per line on stdout; with schedule.textfile, writes Prometheus metrics after each job; with --metrics-port, serves them and " +
      "each run's duration at GET /metrics (docs/metrics.md); with jobs.NAME.heartbeatUrl, " +
      "pings start, success and fail. On SIGINT or SIGTERM: no new fire, the run in progress stops fetching, commits the " +
      "page in hand and is recorded as interrupted; exit 130 or 143.",
    options: [
      { flags: "--run-missed", description: "at start, run each job whose last success is older than its latest due time (not only fires missed while the scheduler was stopped)" },
      ...MetricsOptions,
    ],
    load: () => import("./commands/schedule.js"),
  },
  {
    name: "groups create",
    summary: "onboard a group from a JSON or YAML file: check its plan design, bundle and vendor, create it, enroll its members",
    description:
      "Read FILE (JSON, or YAML when named .yaml or .yml; docs/groups-create.md): the nine fields of a new group (groupId, adminEmail, sponsorName, ein, planDesignId, " +
      "benefitBundleId, vendorId, effectiveDate, terminationDate), optionally `members` (a flat list, each with your memberId, " +
      "as initial-enrollment takes them) and `subscribers` for later additions (households as add-subscriber takes them). Checks the file and the plan design, bundle and " +
      "vendor against GET /v2/designs (a problem names the field and the value; nothing is sent), creates the group " +
      "unless the group listing already has it, reads its planId from the listing, then enrolls the members " +
      "(initial-enrollment) and the subscribers (add-subscriber, each enrollment request polled) except those the member listing already shows. " +
      "A write whose answer was lost is looked for, never sent again blindly. Against production it asks for --yes. " +
      "Exit 0 when done, 1 when a write failed or its outcome is unknown (run it again: it looks first), 2 for a bad file.",
    argument: { name: "file", description: "the group file (JSON, or YAML named .yaml or .yml)" },
    options: [{ flags: "--yes", description: "confirm a write to the production service" }],
    load: () => import("./commands/groups-create.js"),
  },
  {
    name: "demo",
    summary: "the whole story on the embedded sandbox: sync, a simulated day, sync again, deltas, a report",
    options: [
      { flags: "--out <dir>", description: "where to write the deltas and the report" },
      { flags: "--members <n>", description: "members in the sandbox", parse: "positiveInt" },
    ],
    load: () => import("./commands/demo.js"),
  },
  {
    name: "sandbox",
    summary: "serve the local sandbox of the service; print its base URL and keys",
    description:
      "Serve the sandbox: a local stand-in for the service (the same API and keys, generated people, no real data) on " +
      "127.0.0.1, and print its base URL and keys. Its today is the real date unless --today fixes it, so the claims " +
      "window and reconcile --as-of mean what they mean against the service. Days pass only when asked: " +
      "`benefits-sync sandbox advance --url URL [--days N]`, a client of its control endpoint POST /_sandbox/advance " +
      "(loopback only, no key; GET|POST /_sandbox/faults sets faults). Serves until SIGINT or SIGTERM.",
    options: [
      { flags: "--port <n>", description: "port to listen on (default: any free port)", parse: "nonNegativeInt" },
      { flags: "--today <date>", description: "the simulated today, YYYY-MM-DD, for reproducible runs (default: the real date, UTC)", parse: "date" },
      { flags: "--seed <s>", description: "seed of the generated data" },
      { flags: "--members <n>", description: "members to generate", parse: "positiveInt" },
      { flags: "--groups <n>", description: "groups (policies) to generate", parse: "positiveInt" },
      { flags: "--claims-per-member <n>", description: "average claims per member", parse: "nonNegativeInt" },
      { flags: "--latency-ms <n>", description: "latency per request: each answer leaves n ms after its request arrived", parse: "nonNegativeInt" },
      {
        flags: "--answer-shapes <list>",
        description:
          "how writes answer, where the spec shows no body: write=shape,... (createGroup=group|groupPolicyId|empty, addSubscriber=accepted|id|request|empty, " +
          "addDependent=accepted|id|request|empty, terminate=coverage|member|empty, patchMember=member|empty, enrollmentStatus=documented|upper)",
      },
    ],
    load: () => import("./commands/sandbox.js"),
  },
  {
    name: "sandbox advance",
    summary: "make simulated days pass in a running sandbox",
    description:
      "Make N simulated days pass in the sandbox at --url (POST /_sandbox/advance once per day): new hires, " +
      "terminations, claims, deletions. Prints each day's number of changes and the sandbox's new today. Exit 0 when " +
      "every day passed, 1 when the sandbox could not be reached or the URL is not a sandbox, 2 for bad usage.",
    options: [
      { flags: "--url <url>", description: "the sandbox's base URL, printed in its banner" },
      { flags: "--days <n>", description: "days to pass (default 1)", parse: "positiveInt" },
    ],
    load: () => import("./commands/sandbox-advance.js"),
  },
  {
    name: "pii rekey",
    summary: "re-tokenise the snapshot under a new PII key (current and history, one transaction); says what outputs must do",
    description:
      "Change the snapshot's PII key on purpose (docs/pii-key.md). The old key is the variable --old-key-env names, else the " +
      "key file beside the snapshot; the new key is BENEFITS_PII_KEY, else a new key file (<db>.pii-key.new, renamed over " +
      "<db>.pii-key after the commit). The digits behind each token are found by trying those that end in its last4, on every " +
      "core; then every ssn_token and [ssn:…] of every version, current and history, is written under the new key in one " +
      "transaction (hashes and columns with it; no run, no change recorded), fingerprints and the page cache are reset, and " +
      "the snapshot records the new key's check. Outputs delivered before keep the old tokens, which no longer join: the last " +
      "lines say how to re-export. Exit 0 done, 2 refused (the old key is not the snapshot's, tokens whose digits were not " +
      "found, a census apply with open writes), 75 a run holds the snapshot.",
    options: [
      { flags: "--old-key-env <name>", description: "the environment variable holding the old key (default: the key file <db>.pii-key)" },
      { flags: "--dry-run", description: "count the tokens and estimate the search's time; change nothing" },
      { flags: "--exhaustive", description: "look for a token in free text that no key field shares among every nine-digit number (minutes)" },
      { flags: "--drop-unrecoverable", description: "set the tokens whose digits were not found to null ([ssn] in text) instead of refusing" },
    ],
    load: () => import("./commands/pii-rekey.js"),
  },
  {
    name: "census plan",
    summary: "compare a census file with the snapshot and print what apply would do; sends nothing",
    description:
      "Read the census CSV FILE (layout: docs/census.md), check every row (each problem with its line and column), " +
      "match each person with the members of group G in the snapshot (SSN token, name, date of birth) and print the " +
      "subscribers and dependents to add, the coverages to terminate, the demographic updates, the refused plan changes " +
      "and the rows that cannot be matched, with the reason. Sends nothing. Exit 0, 2 for a file or group it cannot use.",
    argument: { name: "file", description: "the census CSV file" },
    options: [{ flags: "--group <group>", description: "the group: its number (groupId) or its policy id" }],
    load: () => import("./commands/census-plan.js"),
  },
  {
    name: "census apply",
    summary: "make the service match a census file (idempotent; a journal survives a crash; a result file per apply)",
    description:
      "Plan FILE against group G as the service has it now, then carry the plan out through the API: add-subscriber in " +
      "batches (each enrollment request polled until it succeeds or fails), add-dependent, terminate, patch " +
      "demographics; then list the group's members by plan and record each row's member and coverage UUIDs in the " +
      "result file (its path printed last). A write whose answer was lost is looked for before it is ever sent again; " +
      "an apply killed midway is completed by the next. Refuses a file with row problems, and the production " +
      "environment without --yes. Exit 0 when every request succeeded, 1 when one failed, 2 for bad input.",
    argument: { name: "file", description: "the census CSV file" },
    options: [
      { flags: "--group <group>", description: "the group: its number (groupId) or its policy id" },
      { flags: "--yes", description: "confirm an apply against the production environment" },
      { flags: "--batch-size <n>", description: "subscribers per add-subscriber request (default 50)", parse: "positiveInt" },
      { flags: "--settle-seconds <n>", description: "how long a write whose answer was lost is looked for in the member listing before it is planned again (default 30)", parse: "nonNegativeInt" },
      { flags: "--result <file>", description: "where to write the result file (default <db>.census/results/<time>-<group policy>.json)" },
    ],
    load: () => import("./commands/census-apply.js"),
  },
  ...WEBHOOK_COMMANDS,
];

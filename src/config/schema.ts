/**
 * The whole configuration of benefits-sync as one zod schema. Parsed once, at the edge
 * (`loadConfig`), then frozen: nothing below the CLI reads `process.env` or a file.
 *
 * Every object is strict, so a misspelt key in `benefits-sync.config.json` is an error that names
 * it instead of a setting silently ignored. Messages are phrased as "expected ..." because the
 * loader appends `got <value> (from <source>)`.
 */
import { z } from "zod";

export const ENVIRONMENTS = ["production", "demo", "sandbox"] as const;
export type EnvironmentName = (typeof ENVIRONMENTS)[number];

export const PII_MODES = ["token", "keep"] as const;
export type PiiMode = (typeof PII_MODES)[number];

export const RESOURCE_NAMES = ["designs", "groups", "members", "claims"] as const;
export type ConfiguredResource = (typeof RESOURCE_NAMES)[number];

const oneOf = (values: readonly string[]) => `expected one of ${values.map((v) => JSON.stringify(v)).join(", ")}`;

const positiveInt = (what = "a positive integer") =>
  z.number({ error: `expected ${what}` }).int({ error: `expected ${what}` }).positive({ error: `expected ${what}` });
const nonNegativeInt = (what = "an integer >= 0") =>
  z.number({ error: `expected ${what}` }).int({ error: `expected ${what}` }).min(0, { error: `expected ${what}` });
const nonNegativeNumber = (what = "a number >= 0") =>
  z.number({ error: `expected ${what}` }).min(0, { error: `expected ${what}` }).finite({ error: `expected ${what}` });
const httpUrl = () => z.url({ protocol: /^https?$/, error: "expected an http(s) URL" });
const nonEmpty = (what: string) => z.string({ error: `expected ${what}` }).min(1, { error: `expected ${what}` });
/** A query parameter or JSON field name. */
const name = () => nonEmpty("a non-empty name");

const Retry = z.strictObject({
  maxAttempts: positiveInt().default(5),
  baseMs: nonNegativeInt().default(250),
  capMs: nonNegativeInt().default(10_000),
  retryAfterCapMs: nonNegativeInt().default(60_000),
});

const Http = z.strictObject({
  concurrency: positiveInt().default(4),
  /** 0 = unlimited; the service's rate limits are not documented. */
  requestsPerSecond: nonNegativeNumber().default(0),
  connectTimeoutMs: positiveInt("a positive integer (milliseconds)").default(10_000),
  headersTimeoutMs: positiveInt("a positive integer (milliseconds)").default(30_000),
  bodyTimeoutMs: positiveInt("a positive integer (milliseconds)").default(30_000),
  retry: Retry.prefault({}),
});

const resourceFields = {
  /** Sent as `limit`; the server decides, so this is a hint, never relied on. */
  pageSize: positiveInt().optional(),
  /** The item field the cursor and the store key on (api-shapes.md tolerance rule 4). */
  idField: name().default("id"),
};
const Resource = z.strictObject(resourceFields);
const ClaimsResource = z.strictObject({
  ...resourceFields,
  /** The spec does not name the service-date range parameters. */
  dateParams: z.strictObject({ from: name().default("serviceDateFrom"), to: name().default("serviceDateTo") }).prefault({}),
  lookbackDays: nonNegativeInt().default(90),
});

const Resources = z.strictObject({
  designs: Resource.prefault({}),
  groups: Resource.prefault({}),
  members: Resource.prefault({}),
  claims: ClaimsResource.prefault({}),
});

const share = "expected a share between 0 and 1";
const Sync = z.strictObject({
  /** A run that would delete more than this share of a resource's rows stops (DeleteGuardError). */
  maxDeleteShare: z.number({ error: share }).min(0, { error: share }).max(1, { error: share }).default(0.1),
  maxDeleteCount: nonNegativeInt().default(50),
  /** A complete scope that listed nothing while at least this many of its records would go fails the run. */
  emptyScopeMin: positiveInt().default(5),
  /** How many complete runs a record must be absent from before it counts as deleted. */
  absenceRuns: positiveInt().default(1),
  groupConcurrency: positiveInt().default(4),
});

const FolderSink = z.strictObject({
  type: z.literal("folder"),
  /** Deltas go under DIR/<run_id, zero-padded to 8 digits>/ (relative to the working directory). */
  dir: nonEmpty("a directory"),
  format: z.enum(["csv", "jsonl", "parquet"], { error: oneOf(["csv", "jsonl", "parquet"]) }).default("csv"),
  /** "folder" (default): DIR/<run>/; "tables": DIR/<resource>/run_id=<run>/part-00000.parquet (Parquet only; docs/lake.md). */
  layout: z.enum(["folder", "tables"], { error: oneOf(["folder", "tables"]) }).optional(),
  /** A new output started later on purpose: the runs before it are never sent (recorded in the ledger). */
  fromRun: positiveInt().optional(),
  /** The files' mode, octal text ("0640"; folders get the matching execute bits). Default: private, 0600 (folders 0700). */
  mode: z
    .string({ error: 'expected an octal mode as text, like "0640"' })
    .regex(/^0?[0-7]{3}$/, { error: 'expected an octal mode as text, like "0640"' })
    .refine((m) => (parseInt(m, 8) & 0o713) === 0o600, { error: "the owner must read and write, with no execute bits and no write for others: 0600, 0640, 0660 or 0644" })
    .optional(),
  /** The group that owns the folders and files: a group name or a gid. */
  group: z.union([nonEmpty("a group name"), z.number().int().nonnegative()], { error: "expected a group name or a gid" }).optional(),
});
const PostgresSink = z
  .strictObject({
    type: z.literal("postgres"),
    /** postgres://user:password@host:5432/db?schema=benefits_sync */
    url: z.string().regex(/^postgres(ql)?:\/\//, { error: "expected a postgres:// URL" }).optional(),
    /** The name of an environment variable that holds the URL (keeps a password out of the file). */
    urlEnv: nonEmpty("an environment variable's name").optional(),
    /** As for a folder: the first run this warehouse is loaded from. */
    fromRun: positiveInt().optional(),
  })
  .refine((s) => (s.url === undefined) !== (s.urlEnv === undefined), { error: "give exactly one of url and urlEnv" });
/** An S3 prefix (issue 39): the folder sink's run folders as objects; credentials only from the AWS default chain. */
const S3Sink = z
  .strictObject({
    type: z.literal("s3"),
    /** s3://bucket/prefix: run 10 goes to s3://bucket/prefix/00000010/. */
    url: z.string({ error: "expected an s3://bucket/prefix URL" }).regex(/^s3:\/\//i, { error: "expected an s3://bucket/prefix URL" }),
    format: z.enum(["csv", "jsonl", "parquet"], { error: oneOf(["csv", "jsonl", "parquet"]) }).default("csv"),
    /** As for a folder: "tables" writes prefix/<resource>/run_id=<run>/part-00000.parquet (Parquet only; docs/lake.md). */
    layout: z.enum(["folder", "tables"], { error: oneOf(["folder", "tables"]) }).optional(),
    fromRun: positiveInt().optional(),
    /** The bucket's region; default: the AWS environment's (AWS_REGION, the profile). */
    region: nonEmpty("a region name, like eu-west-1").optional(),
    /** An S3-compatible store's endpoint (MinIO, R2, GCS interoperability). */
    endpoint: httpUrl().optional(),
    /** Path-style addressing (https://endpoint/bucket/key), which most S3-compatible stores need. */
    forcePathStyle: z.boolean({ error: "expected true or false" }).optional(),
    /** Server-side encryption of every object: SSE-S3 ("AES256") or SSE-KMS ("aws:kms"). */
    sse: z.enum(["AES256", "aws:kms"], { error: oneOf(["AES256", "aws:kms"]) }).optional(),
    /** With sse "aws:kms": the KMS key (id, ARN or alias); default: the account's S3 key. */
    kmsKeyId: nonEmpty("a KMS key id, ARN or alias").optional(),
    /** Refuse a bucket without default encryption (unless sse is set). */
    requireEncryption: z.boolean({ error: "expected true or false" }).optional(),
  })
  .refine((s) => s.kmsKeyId === undefined || s.sse === "aws:kms", { error: 'kmsKeyId goes with "sse": "aws:kms"' });
const SinkName = /^[A-Za-z][A-Za-z0-9_-]{0,63}$/;

/** One job's settings (jobs/): the schedule and time zone are checked when the jobs are read. */
const JobSettings = z.strictObject({
  enabled: z.boolean({ error: "expected true or false" }).optional(),
  schedule: nonEmpty("a cron expression").optional(),
  timezone: nonEmpty("an IANA time zone").optional(),
  /** Names of `sinks`; [] delivers nowhere. Default: every configured sink. */
  sinks: z.array(name(), { error: "expected a list of sink names" }).optional(),
  heartbeatUrl: httpUrl().optional(),
});

const Schedule = z.strictObject({
  /** A Prometheus textfile (node_exporter's textfile collector): rewritten after each job. */
  textfile: nonEmpty("a file path").optional(),
  /** How long a fired job waits for another run to release the snapshot before it skips that fire. */
  waitForSnapshotMs: nonNegativeInt("an integer >= 0 (milliseconds)").default(600_000),
  /**
   * History retention (`benefits-sync prune`, run after each successful sync job): keep the
   * `keepRuns` newest successful syncs, or the runs of the last `keepDays` days. Off unless set.
   */
  retention: z
    .strictObject({ keepRuns: positiveInt().optional(), keepDays: positiveInt().optional() })
    .refine((r) => (r.keepRuns === undefined) !== (r.keepDays === undefined), { error: "give exactly one of keepRuns and keepDays" })
    .optional(),
});

/** The Auth the portal sends with each delivery; its secret comes from the variable named, never from the file. */
const envName = () => nonEmpty("an environment variable's name");
const WebhookAuth = z.discriminatedUnion(
  "type",
  [
    z.strictObject({ type: z.literal("apiKey"), header: name().default("x-api-key"), keyEnv: envName() }),
    z.strictObject({ type: z.literal("basic"), username: nonEmpty("a user name"), passwordEnv: envName() }),
    z.strictObject({ type: z.literal("bearer"), tokenEnv: envName() }),
  ],
  { error: 'expected {"type": "apiKey", "keyEnv": ...}, {"type": "basic", "username": ..., "passwordEnv": ...} or {"type": "bearer", "tokenEnv": ...}' },
);

/** `benefits-sync webhooks serve`: where it listens and what it accepts. */
const webhookReceiverKeys = {
  /** 127.0.0.1: behind a proxy on the same machine; 0.0.0.0 to be reached directly (then give it tls). */
  host: nonEmpty("a host name or address").default("127.0.0.1"),
  port: nonNegativeInt("a port, 0 to 65535").max(65_535, { error: "expected a port, 0 to 65535" }).default(8787),
  /** The path of the URL given to the portal. */
  path: z.string({ error: "expected a path such as /webhooks" }).regex(/^\/[A-Za-z0-9._~\/-]*$/, { error: "expected a path such as /webhooks" }).default("/webhooks"),
  /** A delivery's body is a few hundred bytes; anything over this is refused unread (413). */
  maxBodyBytes: positiveInt().default(65_536),
  auth: WebhookAuth.optional(),
  /** HTTPS with this certificate and key (PEM files); plain HTTP otherwise (behind a TLS proxy). */
  tls: z.strictObject({ cert: nonEmpty("a file path"), key: nonEmpty("a file path") }).optional(),
};

/** `webhooks serve` and its worker (src/webhooks/apply.ts: batches, retries of a failed refetch, how long finished events are kept). */
const Webhooks = z.strictObject({
  ...webhookReceiverKeys,
  batchSize: positiveInt().default(100),
  maxAttempts: positiveInt().default(8),
  retryBaseMs: positiveInt("a positive integer (milliseconds)").default(5_000),
  retryCapMs: positiveInt("a positive integer (milliseconds)").default(600_000),
  retentionDays: positiveInt().default(30),
});

/** A chat webhook told when a job fails or new fields appear (src/jobs/notify.ts). */
const Notify = z
  .strictObject({
    /** Slack-compatible: receives `{"text": "..."}`. Its path is often its token: it is masked like a key. */
    url: httpUrl().optional(),
    /** The name of an environment variable that holds the URL (keeps the token out of the file). */
    urlEnv: nonEmpty("an environment variable's name").optional(),
  })
  .refine((s) => (s.url === undefined) !== (s.urlEnv === undefined), { error: "give exactly one of url and urlEnv" });

/**
 * The configuration schema. Input is what the file, the environment and the flags provide;
 * output has every default filled in, except the service, which has none.
 *
 * @example
 * const config = Config.parse({ baseUrl: "https://demo.example", apiKey: "k" });
 * config.http.concurrency; // 4
 */
export const Config = z
  .strictObject({
    /**
     * No default: which service a command talks to is never guessed (see `resolveService`).
     * `sandbox` is the embedded sandbox, used only when named.
     */
    environment: z.enum(ENVIRONMENTS, { error: oneOf(ENVIRONMENTS) }).optional(),
    /** Base URLs of the named environments; no real host is hard-coded. */
    environments: z.strictObject({ production: httpUrl().optional(), demo: httpUrl().optional() }).prefault({}),
    /** Overrides `environment`. */
    baseUrl: httpUrl().optional(),
    /** The bearer key: never printed, logged, stored or exported. */
    apiKey: nonEmpty("a non-empty key").optional(),
    db: nonEmpty("a file path").default("./benefits-sync.db"),
    piiKey: z.string({ error: "expected a secret of at least 16 characters" }).min(16, { error: "expected a secret of at least 16 characters" }).optional(),
    pii: z.enum(PII_MODES, { error: oneOf(PII_MODES) }).default("token"),
    webhookSecrets: z.array(nonEmpty("a non-empty secret"), { error: "expected a list of secrets" }).default([]),
    http: Http.prefault({}),
    resources: Resources.prefault({}),
    sync: Sync.prefault({}),
    /**
     * Named outputs: every successful `sync` delivers to each (through the ledger), and
     * `export --sink NAME` names one.
     */
    sinks: z
      .record(z.string().regex(SinkName, { error: "expected a sink name: a letter, then letters, digits, _ or -" }), z.discriminatedUnion("type", [FolderSink, PostgresSink, S3Sink], { error: "expected {\"type\": \"folder\", \"dir\": ...}, {\"type\": \"postgres\", \"url\": ...} or {\"type\": \"s3\", \"url\": ...}" }))
      .default({}),
    /** Settings per scheduled job, by name (see jobs/ and `benefits-sync jobs`). */
    jobs: z.record(z.string(), JobSettings).default({}),
    schedule: Schedule.prefault({}),
    /** The webhook receiver (`webhooks serve`), its inbox and the worker that applies it. */
    webhooks: Webhooks.prefault({}),
    notify: Notify.optional(),
  });

/** What the loader accepts: every key optional, values as in the config file. */
export type ConfigInput = z.input<typeof Config>;

type DeepReadonly<T> = T extends (infer U)[]
  ? readonly DeepReadonly<U>[]
  : T extends object
    ? { readonly [K in keyof T]: DeepReadonly<T[K]> }
    : T;

/** The validated, frozen configuration. */
export type Config = DeepReadonly<z.output<typeof Config>>;

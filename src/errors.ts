/**
 * Every error benefits-sync throws. Each has a stable `code` (for scripts and logs), a `retryable`
 * flag (for the retry policy and the scheduler) and a message that never carries a key, a token or
 * a body excerpt longer than {@link EXCERPT_LIMIT}.
 */
import type { ValidationIssue } from "../schemas/error-body.js";
import { escapeControls } from "./control-chars.js";
import { maskConnectionPasswords } from "./url-display.js";
import { maskSsnText } from "./pii/ssn-key.js";

export const EXCERPT_LIMIT = 200;

const secrets = new Set<string>();

/** Register a secret (an API key, a PII key) so that every error message and log line masks it. */
export function registerSecret(secret: string | undefined): void {
  if (secret && secret.length >= 4) secrets.add(secret);
}

/**
 * Mask registered secrets, bearer tokens, the value of every SSN key (the one rule, `isSsnKey`) and
 * every SSN-shaped number (any run of exactly nine digits, also as 123-45-6789 or 123 45 6789) in a
 * text, and show its control characters escaped (`control-chars.ts`, newline and tab kept): a
 * service's message holding `ESC[2J` or U+202E reaches no terminal, log or stored run error as it
 * is. Linear in the text: it runs on every error message and every recorded run error.
 *
 * @example
 * redact('GET /v1/members/123456789 {"ssn":"12-3"}') // 'GET /v1/members/[ssn] {"ssn":"[ssn]"}'
 * redact("bad name \x1b[2J")                          // 'bad name \\x1b[2J'
 */
export function redact(text: string): string {
  let out = maskConnectionPasswords(text);
  for (const s of secrets) out = out.split(s).join("[redacted]");
  out = out.replace(/(bearer\s+)[^\s"',]+/gi, "$1[redacted]");
  return escapeControls(maskSsnText(out));
}

/** Redact and truncate a text for an error message. */
export function excerpt(text: string, limit = EXCERPT_LIMIT): string {
  const clean = redact(text).replace(/\s+/g, " ").trim();
  return clean.length > limit ? `${clean.slice(0, limit)}…` : clean;
}

export abstract class BenefitsSyncError extends Error {
  abstract readonly code: string;
  readonly retryable: boolean = false;
  constructor(message: string, options?: { cause?: unknown }) {
    super(redact(message), options);
    this.name = new.target.name;
  }
}

export interface ApiErrorFields {
  readonly status: number;
  readonly method: string;
  readonly path: string;
  readonly serverMessage?: string | undefined;
  readonly timestamp?: string | undefined;
  readonly issues?: readonly ValidationIssue[] | undefined;
  readonly retryAfterMs?: number | undefined;
  /**
   * What an answer that is not JSON (an HTML error page from a proxy) showed, as `bodyView` allows:
   * the status still decides the error; this only says what came with it.
   */
  readonly notJson?: BodyView | undefined;
}

/** The service answered with an error status. Subclasses narrow it by status. */
export class ApiError extends BenefitsSyncError {
  readonly code: string = "API_ERROR";
  readonly status: number;
  readonly method: string;
  readonly path: string;
  readonly serverMessage: string | undefined;
  readonly timestamp: string | undefined;
  readonly issues: readonly ValidationIssue[];
  constructor(fields: ApiErrorFields, advice?: string) {
    const issues = fields.issues ?? [];
    const issueText = issues.length
      ? `; invalid: ${issues.map((i) => `${i.path.join(".") || "(body)"}: ${i.message}`).join("; ")}`
      : "";
    super(
      `${fields.method} ${fields.path} answered ${fields.status}` +
        (fields.serverMessage ? `: ${excerpt(fields.serverMessage)}` : "") +
        issueText +
        (fields.notJson ? `; the answer is not JSON: ${"excerpt" in fields.notJson ? `it began: ${JSON.stringify(excerpt(fields.notJson.excerpt))}` : fields.notJson.shape}` : "") +
        (advice ? `. ${advice}` : ""),
    );
    this.status = fields.status;
    this.method = fields.method;
    this.path = fields.path;
    this.serverMessage = fields.serverMessage === undefined ? undefined : redact(fields.serverMessage);
    this.timestamp = fields.timestamp;
    this.issues = issues;
  }
}

/** 401: the key is wrong, revoked (a new key deletes the old ones) or for the other environment. */
export class AuthError extends ApiError {
  override readonly code = "AUTH";
  constructor(fields: ApiErrorFields) {
    super(
      fields,
      "Check BENEFITS_API_KEY: keys are per environment, and generating a new key in the portal revokes the old one",
    );
  }
}

/** 403: the organization lacks a permission; only the service operator can grant it. */
export class PermissionError extends ApiError {
  override readonly code = "FORBIDDEN";
  constructor(fields: ApiErrorFields) {
    super(
      fields,
      fields.method === "GET"
        ? "The service operator must adjust your organization's permissions"
        : "The service operator must adjust your organization's permissions; a POST also needs portal permission to view what it creates",
    );
  }
}

export class NotFoundError extends ApiError {
  override readonly code = "NOT_FOUND";
}

/** 429. Retryable; `retryAfterMs` is the server's `Retry-After`, when it sent one. */
export class RateLimitError extends ApiError {
  override readonly code = "RATE_LIMITED";
  override readonly retryable = true;
  readonly retryAfterMs: number | undefined;
  constructor(fields: ApiErrorFields) {
    super(fields);
    this.retryAfterMs = fields.retryAfterMs;
  }
}

/** 5xx. 502, 503 and 504 are retryable; a 500 only on a read, since on a write it is usually the payload. */
export class ServerError extends ApiError {
  override readonly code = "SERVER_ERROR";
  override readonly retryable: boolean;
  readonly retryAfterMs: number | undefined;
  constructor(fields: ApiErrorFields) {
    const write = fields.method !== "GET";
    super(fields, fields.status === 500 && write ? "A 500 usually means missing or malformed nested fields in the payload" : undefined);
    this.retryable = fields.status === 502 || fields.status === 503 || fields.status === 504 || (fields.status === 500 && !write);
    this.retryAfterMs = fields.retryAfterMs;
  }
}

/**
 * One of the three reasons the spec gives for refusing to create a group, with the field at fault
 * (`api/group-rejections.ts` tells them apart, however the service words them).
 */
export abstract class GroupRejectedError extends ApiError {
  constructor(
    fields: ApiErrorFields,
    readonly field: string,
    advice: string,
  ) {
    super(fields, advice);
  }
}

/** 400: the adminEmail or the group number (`groupId`) already belongs to another group. */
export class GroupTakenError extends GroupRejectedError {
  override readonly code = "GROUP_TAKEN";
}

/** 400: a sponsor with this EIN already has a policy whose dates overlap the new one's. */
export class EinOverlapError extends GroupRejectedError {
  override readonly code = "EIN_OVERLAP";
}

/** 400: planDesignId, benefitBundleId or vendorId references no existing record. */
export class UnknownReferenceError extends GroupRejectedError {
  override readonly code = "UNKNOWN_REFERENCE";
}

/** A write whose answer was lost, and a look did not find it applied: it is not sent again blindly. */
export class OutcomeUnknownError extends BenefitsSyncError {
  readonly code = "OUTCOME_UNKNOWN";
}

/** The request never got an answer: refused, reset, timed out. */
export class TransportError extends BenefitsSyncError {
  readonly code = "TRANSPORT";
  override readonly retryable: boolean;
  readonly method: string;
  readonly path: string;
  /** The underlying cause's code (`ECONNRESET`, `UND_ERR_HEADERS_TIMEOUT`, ...). */
  readonly causeCode: string | undefined;
  constructor(method: string, path: string, causeCode: string | undefined, detail: string, retryable: boolean, cause?: unknown, where?: string) {
    super(`${method} ${path}${where ? ` to ${where}` : ""} failed: ${detail}${causeCode ? ` (${causeCode})` : ""}`, { cause });
    this.method = method;
    this.path = path;
    this.causeCode = causeCode;
    this.retryable = retryable;
  }
}

/**
 * What an error may show of a body: a short excerpt (redacted and truncated here), or, for a body
 * that may carry people's data, only a description of its shape that never quotes it.
 */
export type BodyView = { readonly excerpt: string } | { readonly shape: string };

/** The answer was not JSON, or not the shape the endpoint promises. */
export class ResponseShapeError extends BenefitsSyncError {
  readonly code = "RESPONSE_SHAPE";
  readonly endpoint: string;
  /** What the message shows of the body: a redacted excerpt, or the description of its shape. */
  readonly excerpt: string;
  constructor(endpoint: string, problem: string, body: BodyView) {
    const shown = "excerpt" in body ? excerpt(body.excerpt) : body.shape;
    super(`${endpoint}: ${problem}; ${"excerpt" in body ? `the answer began: ${JSON.stringify(shown)}` : `the answer was ${shown}`}`);
    this.endpoint = endpoint;
    this.excerpt = redact(shown);
  }
}

/** The server's cursor did not advance, or a page repeated ids: looping would never end. */
export class PaginationError extends BenefitsSyncError {
  readonly code = "PAGINATION";
}

/** Bad configuration, arguments or file (`input-errors.ts`): the CLI exits 2. Subclasses narrow `code`. */
export class ConfigError extends BenefitsSyncError {
  /** The message's heading, by what the user has to fix. */
  static readonly headings = { configuration: "Invalid configuration", arguments: "Invalid arguments", file: "Cannot use a file" } as const;
  readonly code: string = "CONFIG";
  readonly problems: readonly string[];
  constructor(problems: readonly string[], family: keyof typeof ConfigError.headings = "configuration") {
    super(`${ConfigError.headings[family]}:\n${problems.map((p) => `  - ${p}`).join("\n")}`);
    this.problems = problems.map(redact);
  }
}

/** The snapshot file (`--db` / `BENEFITS_DB`) cannot be opened where it is: a missing or read-only directory, a directory named as the file. */
export class SnapshotPathError extends ConfigError {
  override readonly code = "SNAPSHOT_PATH";
  readonly path: string;
  constructor(path: string, problem: string) {
    super([problem], "file");
    this.path = path;
  }
}

/** The PII key file beside the snapshot is open to others or does not hold a key; it is never changed or replaced for the user. */
export class PiiKeyError extends ConfigError {
  override readonly code = "PII_KEY";
  readonly path: string;
  constructor(path: string, problem: string) {
    super([problem], "file");
    this.path = path;
  }
}

/**
 * `--db` names a file that is not a benefits-sync snapshot (another application's SQLite file, or
 * not SQLite at all). Found before any write, pragma or chmod: the file is left exactly as it was.
 */
export class NotASnapshotError extends ConfigError {
  override readonly code = "NOT_A_SNAPSHOT";
  readonly path: string;
  constructor(path: string, looksLike: string) {
    super([
      `db: ${path} is not a benefits-sync snapshot: it is ${looksLike}. Nothing was changed. ` +
        "Point --db (BENEFITS_DB) at your snapshot, or at a path with no file yet to start a new one",
    ], "file");
    this.path = path;
  }
}

/**
 * The snapshot's file system is full (SQLite's `SQLITE_FULL`, the system's `ENOSPC`). SQLite
 * rolled back the write that did not fit; the message names the file, the space left, and what to
 * do. The CLI exits 1: the run failed, and the next run resumes its walk.
 */
export class DiskFullError extends BenefitsSyncError {
  readonly code = "DISK_FULL";
  readonly path: string;
  /** Bytes free to this user on the snapshot's file system when the write failed, when known. */
  readonly freeBytes: number | undefined;
  /** `then`: what to do once there is space (by default sync's: run it again, it resumes the walk). */
  constructor(path: string, freeBytes: number | undefined, free: string, dir: string, cause?: unknown, then = "run sync again: it resumes this run's walk") {
    super(
      `disk full: the snapshot ${path} could not be written: ${free} free on the file system that holds ${dir}. ` +
        `Nothing of the step that failed was kept. Free space there (or move the snapshot and its files beside it elsewhere and point --db at it), then ${then}`,
      cause === undefined ? undefined : { cause },
    );
    this.path = path;
    this.freeBytes = freeBytes;
  }
}

/** An enrollment request did not settle before its deadline. */
export class TimeoutError extends BenefitsSyncError {
  readonly code = "TIMEOUT";
}

/** A run would delete more than the guard allows; nothing was applied. */
export class DeleteGuardError extends BenefitsSyncError {
  readonly code = "DELETE_GUARD";
}

/**
 * Another live run holds the snapshot (its lease has not lapsed), or another program its write
 * lock: nothing was changed. The CLI exits 75 (temporary failure): try again later, or abandon
 * that run if it is known to be dead.
 */
export class SnapshotBusyError extends BenefitsSyncError {
  readonly code = "SNAPSHOT_BUSY";
  override readonly retryable = true;
  /** The run that holds the snapshot; undefined when another program holds its write lock. */
  readonly runId: number | undefined;
  constructor(message: string, runId: number | undefined) {
    super(message);
    this.runId = runId;
  }
}

/** What an output directory receives, as its errors name it. */
export const OutputNames = {
  deltas: { noun: "deltas", during: "while the deltas were written" },
  report: { noun: "the report", during: "while the report was written" },
} as const;
export type OutputKind = keyof typeof OutputNames;

/** Deltas (or a report) cannot be written there: the message names the path, the problem and the fix, never a bare `ENOTDIR`. */
export class OutputError extends BenefitsSyncError {
  readonly code = "OUTPUT_PATH";
  /** The output directory asked for. */
  readonly path: string;
  readonly problem: string;
  readonly fix: string;
  /** The file system's code (`ENOTDIR`, `EACCES`, ...), for scripts; the message explains it. */
  readonly causeCode: string | undefined;
  /** `kind` names the output in the message: a sink writes deltas, reconcile a report. */
  constructor(path: string, problem: string, fix: string, cause?: unknown, kind: OutputKind = "deltas") {
    super(`cannot write ${OutputNames[kind].noun} to ${path}: ${problem}. Fix: ${fix}`, cause === undefined ? undefined : { cause });
    this.path = path;
    this.problem = problem;
    this.fix = fix;
    const code = cause && typeof cause === "object" ? (cause as { code?: unknown }).code : undefined;
    this.causeCode = typeof code === "string" ? code : undefined;
  }
}

/**
 * The S3 client of an output, and what its failures mean. Credentials come only from the SDK's
 * default chain (AWS_ACCESS_KEY_ID/AWS_SECRET_ACCESS_KEY/AWS_SESSION_TOKEN, AWS_PROFILE and the
 * shared files, container and instance roles): no option here takes one. A failure becomes an
 * error with a stable `code` and a message naming the bucket and what to do, built from the
 * error's name and status only, so that nothing the SDK or the server echoed (a request's
 * signature, a key id) reaches a message.
 */
import type { S3Client } from "@aws-sdk/client-s3";
import { s3Url, type S3Options, type S3Target } from "./s3-target.js";

/**
 * The SDK's one notice on Node 20 (releases after January 2027 need Node 22), printed to stderr
 * on the first client: a cron job with `--quiet` prints nothing on success, so it is turned off
 * the supported way (the SDK's own variable), unless the user set that variable themselves.
 */
function quietNodeVersionWarning(): void {
  process.env.AWS_SDK_JS_NODE_VERSION_SUPPORT_WARNING_DISABLED ??= "true";
}

/**
 * Every request's deadlines (the SDK sets none: a store that takes a PUT and never answers held
 * `sync` for good). Connecting: 10 s. Idle: 30 s without a byte either way (an upload that moves
 * is never cut, whatever its size). Whole: 10 minutes for one request (a 100 MB PutObject at
 * 1 MB/s takes under 2; a server that trickles a byte a minute is cut). Attempts: 3 in all
 * (the SDK's standard retries, with backoff), so a store that does not answer fails a delivery
 * in about 1.5 minutes, and the delivery stays pending for the next run.
 */
export const S3Deadlines = { connectMs: 10_000, idleMs: 30_000, requestMs: 600_000, attempts: 3 } as const;

export interface S3ClientOptions {
  /** Stops every request of the client at once (a SIGTERM): each rejects with an AbortError. */
  readonly signal?: AbortSignal | undefined;
  /** Other deadlines than {@link S3Deadlines} (a test's shorter ones). */
  readonly deadlines?: { readonly connectMs: number; readonly idleMs: number; readonly requestMs: number; readonly attempts: number };
}

/** A client for `opts` (the SDK's default region chain when `region` is unset), with deadlines on every request. */
export async function s3Client(opts: S3Options, how: S3ClientOptions = {}): Promise<S3Client> {
  quietNodeVersionWarning();
  const { S3Client } = await import("@aws-sdk/client-s3");
  const region = opts.region ?? process.env.AWS_REGION ?? process.env.AWS_DEFAULT_REGION;
  const d = how.deadlines ?? S3Deadlines;
  const client = new S3Client({
    // A custom endpoint (MinIO, R2) takes any region name; AWS itself needs the bucket's.
    ...(region ? { region } : opts.endpoint ? { region: "us-east-1" } : {}),
    ...(opts.endpoint ? { endpoint: opts.endpoint } : {}),
    ...(opts.forcePathStyle !== undefined ? { forcePathStyle: opts.forcePathStyle } : {}),
    maxAttempts: d.attempts,
    requestHandler: { connectionTimeout: d.connectMs, socketTimeout: d.idleMs, requestTimeout: d.requestMs, throwOnRequestTimeout: true },
  });
  const signal = how.signal;
  if (signal) {
    // Every command of this client (lib-storage's uploads too, which send through it) carries the
    // signal: one place, so that no request of a delivery is left out of a stop.
    const send = client.send.bind(client) as (command: unknown, options?: object) => Promise<unknown>;
    client.send = ((command: unknown, options?: object) => send(command, { abortSignal: signal, ...options })) as S3Client["send"];
  }
  return client;
}

/** Codes of an S3 delivery's failures. The two refusals exit 2 (fixed by changing the output, not by retrying). */
export const S3Codes = {
  noBucket: "S3_NO_BUCKET",
  unencrypted: "S3_UNENCRYPTED",
  access: "S3_ACCESS",
  credentials: "S3_CREDENTIALS",
  unreachable: "S3_UNREACHABLE",
  /** Stopped by SIGINT or SIGTERM mid-delivery: the run's interruption code, as a run's own stop is recorded. */
  interrupted: "INTERRUPTED",
  other: "S3",
} as const;

export class S3OutputError extends Error {
  constructor(
    readonly code: string,
    message: string,
  ) {
    super(message);
    this.name = "S3OutputError";
  }
}

const CREDENTIAL_HELP =
  "check the AWS credentials this process gets (AWS_ACCESS_KEY_ID and AWS_SECRET_ACCESS_KEY, AWS_PROFILE, or the container or instance role) and that they may write there";

/**
 * Explain an SDK failure met while `doing` (e.g. "uploading 00000010/members.csv") at `t`.
 *
 * @example throw explainS3Error(e, target, "checking the bucket")
 */
export function explainS3Error(e: unknown, t: S3Target, doing: string): S3OutputError {
  if (e instanceof S3OutputError) return e;
  const err = (e ?? {}) as { name?: string; code?: string; $metadata?: { httpStatusCode?: number } };
  const name = String(err.name ?? "Error");
  const status = err.$metadata?.httpStatusCode;
  const where = s3Url(t);
  if (name === "NoSuchBucket" || (name === "NotFound" && doing === CHECKING_BUCKET)) {
    return new S3OutputError(S3Codes.noBucket, `the bucket "${t.bucket}" does not exist (${where}); create it, or correct the bucket in the s3:// URL`);
  }
  if (name === "CredentialsProviderError") {
    return new S3OutputError(S3Codes.credentials, `no AWS credentials found for ${where}; ${CREDENTIAL_HELP}`);
  }
  if (/^(InvalidAccessKeyId|SignatureDoesNotMatch|ExpiredToken|InvalidToken|TokenRefreshRequired|AccessDenied|Forbidden|AllAccessDisabled)$/.test(name) || status === 403) {
    return new S3OutputError(S3Codes.access, `${where} refused the request while ${doing} (${status === 403 && !/^[A-Z][A-Za-z]+$/.test(name) ? "403" : name}); ${CREDENTIAL_HELP}`);
  }
  if (name === "AbortError") {
    return new S3OutputError(S3Codes.interrupted, `${where}: stopped while ${doing} (the process was asked to stop); nothing of this delivery is committed, and the next run delivers it`);
  }
  const code = typeof err.code === "string" ? err.code : "";
  if (/^(ECONNREFUSED|ECONNRESET|ENOTFOUND|EAI_AGAIN|ETIMEDOUT|EHOSTUNREACH|ENETUNREACH|EPIPE)$/.test(code) || /^(TimeoutError|RequestTimeout)$/.test(name)) {
    return new S3OutputError(S3Codes.unreachable, `the S3 endpoint for ${where} could not be reached while ${doing} (${code || name}); check the endpoint and the network, then run again`);
  }
  return new S3OutputError(S3Codes.other, `${where}: ${doing} failed (${name}${status ? `, HTTP ${status}` : ""}); run again, and check the bucket if it keeps failing`);
}

export const CHECKING_BUCKET = "checking the bucket";

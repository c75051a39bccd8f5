/**
 * Where an S3 output points: `s3://bucket/prefix`, and how the store is reached (region, endpoint,
 * path-style addressing, server-side encryption). Credentials are never part of it: the AWS SDK's
 * default chain finds them (environment, shared profile, container or instance role), so that
 * nothing here, in the ledger's output identity or in a message, is a secret.
 */
import { ConfigError } from "../../errors.js";
import type { FileFormatName } from "../files/folder-sink.js";
import type { LayoutName } from "../files/table-layout.js";

export type SseMode = "AES256" | "aws:kms";

export interface S3Options {
  readonly region?: string;
  /** An S3-compatible store's endpoint (MinIO, R2, GCS interoperability): `https://host[:port]`. */
  readonly endpoint?: string;
  /** `https://endpoint/bucket/key` rather than `https://bucket.endpoint/key`. */
  readonly forcePathStyle?: boolean;
  /** Encrypt every object on the server: SSE-S3 (`AES256`) or SSE-KMS (`aws:kms`, with `kmsKeyId` or the account's default key). */
  readonly sse?: SseMode;
  readonly kmsKeyId?: string;
  /** Refuse a bucket without default encryption (unless `sse` encrypts each object). */
  readonly requireEncryption?: boolean;
}

export interface S3Target {
  readonly bucket: string;
  /** Without leading or trailing slash; "" for the bucket's root. */
  readonly prefix: string;
}

/** `s3://bucket/prefix` as messages and the ledger name it. */
export const s3Url = (t: S3Target): string => `s3://${t.bucket}${t.prefix ? `/${t.prefix}` : ""}`;

/** An object's key under the target: `prefix/00000010/members.csv`. */
export const s3Key = (t: S3Target, relative: string): string => (t.prefix ? `${t.prefix}/${relative}` : relative);

/**
 * An S3 output's identity in the delivery ledger: the format (with `-tables` for the table layout,
 * as a folder's) and the URL (`parquet:s3://lake/benefits`), never a credential.
 */
export const s3Output = (format: FileFormatName, t: S3Target, layout: LayoutName = "folder"): string => `${format}${layout === "tables" ? "-tables" : ""}:${s3Url(t)}`;

export const isS3Url = (value: string): boolean => /^s3:\/\//i.test(value);

const BUCKET = /^[a-z0-9][a-z0-9.-]{1,61}[a-z0-9]$/;

/**
 * Parse `s3://bucket/prefix`; `where` names the setting in errors (`--out`, `sinks.lake.url`). A
 * ConfigError for anything else: no bucket, a bucket name S3 does not allow, credentials or a
 * query in the URL (a presigned URL's signature is a secret, and is never accepted).
 *
 * @example parseS3Url("s3://lake/benefits/deltas/", "--out") // { bucket: "lake", prefix: "benefits/deltas" }
 */
export function parseS3Url(value: string, where: string): S3Target {
  const m = /^s3:\/\/([^/?#]*)(\/[^?#]*)?([?#].*)?$/i.exec(value);
  const fix = "give s3://BUCKET/PREFIX (credentials come from the AWS environment, a profile or a role, never from the URL)";
  if (!m) throw new ConfigError([`${where}: not an s3://BUCKET/PREFIX URL; ${fix}`]);
  const [, host = "", path = "", rest] = m;
  if (host.includes("@")) throw new ConfigError([`${where}: the URL holds credentials (before @), which are never taken from a URL; ${fix}`]);
  if (rest !== undefined) throw new ConfigError([`${where}: the URL has a query or fragment (${rest.startsWith("?") ? "?…" : "#…"}), which an s3:// output does not take; ${fix}`]);
  if (!BUCKET.test(host)) {
    throw new ConfigError([`${where}: "${host}" is not a bucket name (3 to 63 lower-case letters, digits, dots or hyphens); ${fix}`]);
  }
  const prefix = path.split("/").filter((p) => p !== "").join("/");
  if (prefix.split("/").some((p) => p === "." || p === "..")) throw new ConfigError([`${where}: the prefix "${prefix}" has a . or .. segment; name the folder plainly`]);
  return { bucket: host, prefix };
}

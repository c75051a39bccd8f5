/**
 * Publishing a staged local folder to S3, the commit marker last: every data file of
 * `localDir` (its sub-folders too) is uploaded to `s3://bucket/prefix/<folder>/<relative path>`,
 * and only once all of them are there the marker (`manifest.json`). A reader that sees a folder's
 * manifest sees the folder complete; a delivery that dies before it leaves data objects without a
 * manifest, which readers ignore and the next delivery overwrites with the same bytes.
 *
 * A file under {@link MULTIPART_FROM} (100 MB) goes as one PutObject (read whole: the SDK retries
 * it); a larger one as a multipart upload through `@aws-sdk/lib-storage` (16 MB parts, four at
 * once). Files go four at once, holding at most {@link BYTES_IN_FLIGHT} in memory between them.
 * An upload that fails in-process aborts its multipart upload; one
 * cut off by a kill leaves incomplete parts, which a bucket lifecycle rule
 * (AbortIncompleteMultipartUpload) removes (docs/sinks.md). With `sse`, every PUT (and every
 * multipart upload) asks for server-side encryption.
 */
import { createReadStream, readdirSync, statSync } from "node:fs";
import { join, relative, sep } from "node:path";
import type { S3Client } from "@aws-sdk/client-s3";
import { MANIFEST, parseManifest, type Manifest } from "../files/manifest.js";
import { explainS3Error } from "./s3-client.js";
import { s3Key, type S3Options, type S3Target } from "./s3-target.js";

/**
 * Where an upload becomes multipart: from 100 MB, where AWS advises it. Below, one PutObject is
 * faster: s3rver on loopback takes a multipart upload at about half the speed of a PutObject of
 * the same bytes (it copies the parts into the object), and with 5 MB parts a first sync's upload
 * ran at 0.51 of plain PutObject's speed (docs/benchmarks.md).
 */
export const MULTIPART_FROM = 100 * 1024 * 1024;
/** A multipart upload's part (S3's smallest is 5 MB), and how many of them are sent at once. */
export const PART_SIZE = 16 * 1024 * 1024;
const PARTS_AT_ONCE = 4;
/** The bytes a publish's uploads hold in memory at once (one upload always goes, whatever its size). */
export const BYTES_IN_FLIGHT = 128 * 1024 * 1024;

export interface PublishOptions extends Pick<S3Options, "sse" | "kmsKeyId"> {
  /** The file that commits the folder, uploaded last (default `manifest.json`). */
  readonly marker?: string;
  /** Files uploaded at once (default 4). */
  readonly concurrency?: number;
  /** Where an upload becomes multipart, and its part size (defaults MULTIPART_FROM and PART_SIZE; a test's smaller file). */
  readonly multipart?: { readonly from: number; readonly partSize: number };
}

/** What went where: the keys in upload order, the marker's last. */
export interface Published {
  readonly keys: readonly string[];
}

/** The SSE headers of every PUT, from a sink's options. */
export function sseParams(o: Pick<S3Options, "sse" | "kmsKeyId">): { ServerSideEncryption?: "AES256" | "aws:kms"; SSEKMSKeyId?: string } {
  if (!o.sse) return {};
  return { ServerSideEncryption: o.sse, ...(o.sse === "aws:kms" && o.kmsKeyId ? { SSEKMSKeyId: o.kmsKeyId } : {}) };
}

/** Every file under `dir`, as `/`-separated paths relative to it, sorted. */
export function filesUnder(dir: string): string[] {
  const out: string[] = [];
  const walk = (d: string): void => {
    for (const name of readdirSync(d)) {
      const p = join(d, name);
      if (statSync(p).isDirectory()) walk(p);
      else out.push(relative(dir, p).split(sep).join("/"));
    }
  };
  walk(dir);
  return out.sort();
}

/**
 * Upload the files of `localDir` under `s3://bucket/prefix/<folder>/`, the marker last. Throws an
 * S3OutputError (s3-client.ts) on the first file that fails; the marker is then not uploaded.
 *
 * @example await publishFolder(client, { bucket: "lake", prefix: "deltas" }, "/tmp/stage/00000010", "00000010")
 */
export async function publishFolder(client: S3Client, t: S3Target, localDir: string, folder: string, opts: PublishOptions = {}): Promise<Published> {
  const marker = opts.marker ?? MANIFEST;
  const all = filesUnder(localDir);
  if (!all.includes(marker)) throw new Error(`${localDir} has no ${marker}: a folder is published only with its commit marker`);
  return publishFiles(client, t, localDir, all.filter((f) => f !== marker), marker, { ...opts, under: folder });
}

/**
 * Upload `files` of `localDir` (relative paths) to `s3://bucket/prefix/[under/]<file>`, several at
 * once, and only then `marker` (the commit marker). The table layout publishes a run this way:
 * its partitions' files, then `_manifests/00000010.json`.
 */
export async function publishFiles(client: S3Client, t: S3Target, localDir: string, files: readonly string[], marker: string, opts: PublishOptions & { readonly under?: string } = {}): Promise<Published> {
  const key = (f: string): string => (opts.under ? `${opts.under}/${f}` : f);
  const keys: string[] = [];
  const budget = byteBudget(BYTES_IN_FLIGHT);
  let next = 0;
  const worker = async (): Promise<void> => {
    while (next < files.length) {
      const f = files[next++]!;
      const path = join(localDir, f);
      const size = statSync(path).size;
      const { from, partSize } = multipartOf(opts);
      const held = size < from ? size : partSize * PARTS_AT_ONCE;
      await budget.take(held);
      try {
        keys.push(await uploadFile(client, t, path, key(f), opts, size));
      } finally {
        budget.give(held);
      }
    }
  };
  await Promise.all(Array.from({ length: Math.max(1, Math.min(opts.concurrency ?? 4, files.length)) }, worker));
  keys.push(await uploadFile(client, t, join(localDir, marker), key(marker), opts));
  return { keys };
}

/** Where `opts` makes an upload multipart, and its part size. */
const multipartOf = (opts: Pick<PublishOptions, "multipart">): { readonly from: number; readonly partSize: number } => opts.multipart ?? { from: MULTIPART_FROM, partSize: PART_SIZE };

/** A count of bytes held, shared by uploads: `take` waits while another upload would pass `limit` (one upload alone always goes). */
export function byteBudget(limit: number): { take(n: number): Promise<void>; give(n: number): void } {
  let held = 0;
  const waiting: { n: number; go: () => void }[] = [];
  const wake = (): void => {
    while (waiting.length > 0 && (held === 0 || held + waiting[0]!.n <= limit)) {
      const w = waiting.shift()!;
      held += w.n;
      w.go();
    }
  };
  return {
    take: (n) =>
      new Promise<void>((go) => {
        waiting.push({ n, go });
        wake();
      }),
    give(n) {
      held -= n;
      wake();
    },
  };
}

/** One file to `s3://bucket/prefix/<rel>`; returns its key. */
export async function uploadFile(client: S3Client, t: S3Target, path: string, rel: string, opts: Pick<PublishOptions, "sse" | "kmsKeyId" | "multipart"> = {}, size: number = statSync(path).size): Promise<string> {
  const Key = s3Key(t, rel);
  const { from, partSize } = multipartOf(opts);
  try {
    if (size < from) {
      const { PutObjectCommand } = await import("@aws-sdk/client-s3");
      const { readFile } = await import("node:fs/promises");
      await client.send(new PutObjectCommand({ Bucket: t.bucket, Key, Body: await readFile(path), ...sseParams(opts) }));
    } else {
      const { Upload } = await import("@aws-sdk/lib-storage");
      const upload = new Upload({ client, params: { Bucket: t.bucket, Key, Body: createReadStream(path), ...sseParams(opts) }, partSize, queueSize: PARTS_AT_ONCE, leavePartsOnError: false });
      await upload.done();
    }
  } catch (e) {
    throw explainS3Error(e, t, `uploading ${rel}`);
  }
  return Key;
}

/**
 * The manifest of `s3://bucket/prefix/<folder>/manifest.json`, or undefined when there is none
 * (the folder was never committed). Other failures (credentials, network) throw.
 *
 * @example await readS3Manifest(client, target, "00000010") // { runId: 10, runs: [10], ... }
 */
export async function readS3Manifest(client: S3Client, t: S3Target, folder: string, marker: string = MANIFEST): Promise<Manifest | undefined> {
  const { GetObjectCommand } = await import("@aws-sdk/client-s3");
  let text: string;
  try {
    const r = await client.send(new GetObjectCommand({ Bucket: t.bucket, Key: s3Key(t, `${folder}/${marker}`) }));
    text = (await r.Body?.transformToString("utf8")) ?? "";
  } catch (e) {
    if ((e as { name?: string }).name === "NoSuchKey" || (e as { $metadata?: { httpStatusCode?: number } }).$metadata?.httpStatusCode === 404) return undefined;
    throw explainS3Error(e, t, `reading ${folder}/${marker}`);
  }
  return parseManifest(text);
}

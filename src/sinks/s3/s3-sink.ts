/**
 * An S3 prefix as a sink (`s3://bucket/prefix`): the same run folders, files, bytes and ledger as
 * a local folder (folder-sink.ts). Each run's folder is staged locally by the folder sink itself
 * (the same format writers, the same manifest), then published (publish-folder.ts): data files
 * first, `manifest.json` last, so `prefix/00000010/manifest.json` appears only over a complete
 * folder. The crash rule reads that manifest back: a delivery a dead process left pending arrived
 * when the manifest is there and names the same runs and format.
 *
 * Before the first upload of a delivery the bucket is checked: a missing bucket is refused
 * (S3_NO_BUCKET, exit 2), and with `requireEncryption` a bucket without default encryption too
 * (S3_UNENCRYPTED), unless `sse` asks for encryption on every PUT. A server that does not answer
 * GetBucketEncryption (NotImplemented: some S3-compatible stores) cannot show it encrypts, and is
 * refused the same way.
 */
import { mkdtempSync, readdirSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import type { S3Client } from "@aws-sdk/client-s3";
import { ConfigError } from "../../errors.js";
import { processAlive } from "../../store/runs/run-lease.js";
import type { Sink, SinkSession } from "../sink.js";
import { folderSink, type DeltaFolder, type FileFormat } from "../files/folder-sink.js";
import { runFolderName, runFolderNames } from "../files/run-folder-name.js";
import { sameRuns } from "../files/manifest.js";
import type { LayoutName } from "../files/table-layout.js";
import { CHECKING_BUCKET, S3Codes, S3OutputError, explainS3Error, s3Client } from "./s3-client.js";
import { publishFolder, readS3Manifest } from "./publish-folder.js";
import { claimS3Prefix } from "./s3-claim.js";
import { checkS3Layout } from "./s3-layout.js";
import { s3Output, s3Url, type S3Options, type S3Target } from "./s3-target.js";

/** A sink's S3 options, and the signal that stops its deliveries in flight (SIGINT, SIGTERM: the delivery fails and stays pending). */
export type S3SinkOptions = S3Options & { readonly signal?: AbortSignal | undefined };

/**
 * @example await deliverToSink(db, s3Sink(parseS3Url("s3://lake/deltas", "--out"), csvFormat, { region: "eu-west-1" }), runId)
 */
export function s3Sink(t: S3Target, format: FileFormat, opts: S3SinkOptions = {}): Sink<DeltaFolder> {
  let client: Promise<S3Client> | undefined;
  const clientOf = (): Promise<S3Client> => (client ??= s3Client(opts, { signal: opts.signal }));
  const checks = prefixChecks(t, opts, "folder");
  return {
    output: s3Output(format.name, t),
    describe: `${s3Url(t)} (${format.name})`,
    perRun: true,
    prepare: async (id) => checks.prepare(await clientOf(), id),
    async arrived(d) {
      const c = await clientOf();
      for (const name of runFolderNames(d.forRun)) {
        const m = await readS3Manifest(c, t, name);
        if (m && m.runId === d.forRun && sameRuns(m.runs, d.runs) && m.format === format.name) return true;
      }
      return false;
    },
    async open(plan) {
      const c = await clientOf();
      // Made in prepare, unless the store could not be reached then (or no prepare: an export).
      await checks.open(c, plan.facts?.snapshotId);
      return openStaged(c, t, format, opts, plan);
    },
  };
}

async function openStaged(c: S3Client, t: S3Target, format: FileFormat, opts: S3Options, plan: Parameters<Sink<DeltaFolder>["open"]>[0]): Promise<SinkSession<DeltaFolder>> {
  clearDeadStages();
  let stage: string | undefined = mkdtempSync(join(tmpdir(), `${STAGE}${process.pid}-`));
  const inner = (await folderSink(stage, format).open(plan)) as SinkSession<DeltaFolder>;
  return {
    write: (resource, deltas) => inner.write(resource, deltas),
    async commit() {
      const local = await inner.commit();
      const folder = runFolderName(local.runId);
      await publishFolder(c, t, local.dir, folder, opts);
      return { ...local, dir: `${s3Url(t)}/${folder}` };
    },
    async close() {
      await inner.close();
      if (stage) rmSync(stage, { recursive: true, force: true });
      stage = undefined;
    },
  };
}

/**
 * What a delivery to `t` checks before it uploads anything, once per sink (its deliveries share
 * checks that passed; failed ones are made again): the bucket ({@link checkBucket}), the layout
 * (one per prefix, as for a folder: s3-layout.ts), then the prefix claimed for the snapshot (s3-claim.ts). `prepare` runs before the ledger records a
 * delivery, so that a refusal (another snapshot's prefix) records nothing; a store it cannot reach
 * is left to `open`, which checks again and whose failure the ledger records.
 */
export function prefixChecks(t: S3Target, opts: S3Options, layout: LayoutName): { prepare(c: S3Client, snapshotId: string | null | undefined): Promise<void>; open(c: S3Client, snapshotId: string | null | undefined): Promise<void> } {
  const bucket = bucketCheck(t, opts);
  let passed = false;
  // What prepare met, for open to record: a store that does not answer is waited for once, not twice.
  let unreached: unknown;
  const check = async (c: S3Client, id: string | null | undefined): Promise<void> => {
    await bucket(c);
    await checkS3Layout(c, t, layout);
    await claimS3Prefix(c, t, id, opts);
    passed = true;
  };
  return {
    async prepare(c, id) {
      try {
        await check(c, id);
      } catch (e) {
        if (e instanceof ConfigError) throw e;
        unreached = e;
      }
    },
    async open(c, id) {
      if (passed) return;
      const e = unreached;
      unreached = undefined;
      if (e !== undefined) throw e;
      await check(c, id);
    },
  };
}

/** {@link checkBucket} once per sink: its deliveries share a check that passed; a failed one is made again by the next. */
export function bucketCheck(t: S3Target, opts: S3Options): (c: S3Client) => Promise<void> {
  let checked: Promise<void> | undefined;
  return (c) =>
    (checked ??= checkBucket(c, t, opts).catch((e: unknown) => {
      checked = undefined;
      throw e;
    }));
}

/** The bucket exists (and, when asked, encrypts by default); an S3OutputError otherwise. */
export async function checkBucket(c: S3Client, t: S3Target, opts: S3Options): Promise<void> {
  const { HeadBucketCommand, GetBucketEncryptionCommand } = await import("@aws-sdk/client-s3");
  try {
    await c.send(new HeadBucketCommand({ Bucket: t.bucket }));
  } catch (e) {
    throw explainS3Error(e, t, CHECKING_BUCKET);
  }
  if (!opts.requireEncryption || opts.sse) return;
  const refuse = (why: string) =>
    new S3OutputError(
      S3Codes.unencrypted,
      `${s3Url(t)}: ${why}, and encryption is required (requireEncryption); nothing was uploaded. Turn on default encryption for the bucket, or set "sse" on the sink ("AES256" or "aws:kms") so that every object is encrypted as it is written`,
    );
  try {
    const r = await c.send(new GetBucketEncryptionCommand({ Bucket: t.bucket }));
    if (!r.ServerSideEncryptionConfiguration?.Rules?.some((x) => x.ApplyServerSideEncryptionByDefault?.SSEAlgorithm)) throw refuse(`the bucket "${t.bucket}" has no default encryption`);
  } catch (e) {
    if (e instanceof S3OutputError) throw e;
    const name = (e as { name?: string }).name;
    if (name === "ServerSideEncryptionConfigurationNotFoundError") throw refuse(`the bucket "${t.bucket}" has no default encryption`);
    if (name === "NotImplemented" || (e as { $metadata?: { httpStatusCode?: number } }).$metadata?.httpStatusCode === 501) {
      throw refuse(`the server does not say whether the bucket "${t.bucket}" encrypts (GetBucketEncryption is not implemented there)`);
    }
    throw explainS3Error(e, t, "checking the bucket's encryption");
  }
}

/** Staging folders: `<tmp>/benefits-sync-s3-<pid>-XXXXXX`, removed on close, and by the next delivery when their process was killed. */
export const STAGE = "benefits-sync-s3-";

export function clearDeadStages(): void {
  let names: string[];
  try {
    names = readdirSync(tmpdir());
  } catch {
    return;
  }
  for (const name of names) {
    const m = new RegExp(`^${STAGE}(\\d+)-[A-Za-z0-9]{6}$`).exec(name);
    if (!m || Number(m[1]) === process.pid || processAlive(Number(m[1]))) continue;
    rmSync(join(tmpdir(), name), { recursive: true, force: true });
  }
}

/**
 * Claiming an S3 prefix for one snapshot, atomically, before any data goes there. Reading who
 * owns a prefix (s3-owner.ts: a LIST and a GET) and then uploading let two snapshots delivering
 * at once into a new prefix both pass, and both write run 1. The claim is an owner object,
 * `prefix/_owner.json` (`{"snapshotId": …, "claimedAt": …}`), created with a conditional PUT
 * (`If-None-Match: *`): of two snapshots claiming at once, S3 creates it for one, and answers the
 * other 412 PreconditionFailed; that one reads the winner's id and is refused (an
 * OutputSnapshotError, exit 2) before it uploads anything. The object is read back after the PUT
 * too, for stores that take the header and ignore it (s3rver 3.7.1 does, on PUT: it honours
 * If-None-Match on GET and HEAD only): there the claim is no longer atomic, but a loser that
 * PUT before the winner still reads the winner's id.
 *
 * A prefix with an owner object costs one GET per delivery (no LIST). A prefix an older
 * benefits-sync delivered to has manifests and no owner object: its first manifest decides (the
 * LIST and GET of s3-owner.ts), and the snapshot it belongs to then claims it.
 */
import type { S3Client } from "@aws-sdk/client-s3";
import { OutputSnapshotError, ownerRefusal, snapshotIdAt } from "../files/folder-owner.js";
import { explainS3Error, s3Client } from "./s3-client.js";
import { sseParams } from "./publish-folder.js";
import { s3Owner } from "./s3-owner.js";
import { parseS3Url, s3Key, s3Url, type S3Options, type S3Target } from "./s3-target.js";

/** The owner object's name under the prefix: with `_`, outside every run folder and table (a glob over `prefix/*\/` or `prefix/members/` never sees it). */
export const OWNER_OBJECT = "_owner.json";

const statusOf = (e: unknown): number | undefined => (e as { $metadata?: { httpStatusCode?: number } }).$metadata?.httpStatusCode;

/** The snapshot id `prefix/_owner.json` names, or undefined when there is none. */
export async function readS3OwnerObject(c: S3Client, t: S3Target): Promise<string | undefined> {
  const { GetObjectCommand } = await import("@aws-sdk/client-s3");
  let text: string;
  try {
    const r = await c.send(new GetObjectCommand({ Bucket: t.bucket, Key: s3Key(t, OWNER_OBJECT) }));
    text = (await r.Body?.transformToString("utf8")) ?? "";
  } catch (e) {
    if ((e as { name?: string }).name === "NoSuchKey" || statusOf(e) === 404) return undefined;
    throw explainS3Error(e, t, `reading ${OWNER_OBJECT}`);
  }
  try {
    const id = (JSON.parse(text) as { snapshotId?: unknown }).snapshotId;
    return typeof id === "string" && id !== "" ? id : undefined;
  } catch {
    return undefined; // not ours: claims nothing
  }
}

/** Create `prefix/_owner.json` for `ours` unless it exists: true when this call created it. */
async function putOwnerObject(c: S3Client, t: S3Target, ours: string, sse: Pick<S3Options, "sse" | "kmsKeyId">): Promise<boolean> {
  const { PutObjectCommand } = await import("@aws-sdk/client-s3");
  const body = `${JSON.stringify({ snapshotId: ours, claimedAt: new Date().toISOString() })}\n`;
  for (let attempt = 1; ; attempt++) {
    try {
      await c.send(new PutObjectCommand({ Bucket: t.bucket, Key: s3Key(t, OWNER_OBJECT), Body: body, ContentType: "application/json", IfNoneMatch: "*", ...sseParams(sse) }));
      return true;
    } catch (e) {
      if (statusOf(e) === 412 || (e as { name?: string }).name === "PreconditionFailed") return false;
      // 409 ConditionalRequestConflict: another conditional PUT of the key was in progress; ask again.
      if (statusOf(e) === 409 && attempt < 3) continue;
      throw explainS3Error(e, t, `claiming the prefix (${OWNER_OBJECT})`);
    }
  }
}

/** Options of a claim: the database named in a refusal, and the SSE of every PUT (the owner object's too). */
export type ClaimOptions = { readonly db?: string } & Pick<S3Options, "sse" | "kmsKeyId">;

/**
 * Make the prefix `t` snapshot `ours`'s, or refuse (an OutputSnapshotError naming the owner and
 * what to do) when it is another's. With `claim: false`, or `ours` undefined (a snapshot with no
 * id yet), it reads only: refused a prefix that has another owner, it claims none. An S3 failure
 * is an S3OutputError.
 *
 * @example await claimS3Prefix(client, { bucket: "lake", prefix: "deltas" }, "3f2a…") // creates deltas/_owner.json, or finds it ours
 */
export async function claimS3Prefix(c: S3Client, t: S3Target, ours: string | null | undefined, opts: ClaimOptions & { readonly claim?: boolean } = {}): Promise<void> {
  const where = s3Url(t);
  const ownerUrl = `${where}/${OWNER_OBJECT}`;
  const refuse = (id: string, manifest: string) => ownerRefusal({ where, id, manifest, ours, db: opts.db, instead: "a new prefix (another --out s3://bucket/prefix, or another sink url" });
  const claimed = await readS3OwnerObject(c, t);
  if (claimed !== undefined) {
    if (claimed === ours) return;
    throw refuse(claimed, ownerUrl);
  }
  let legacy: Awaited<ReturnType<typeof s3Owner>>;
  try {
    legacy = await s3Owner(c, t);
  } catch (e) {
    throw explainS3Error(e, t, "reading which snapshot the prefix belongs to");
  }
  if (legacy && legacy.id !== ours) throw refuse(legacy.id, legacy.manifest);
  if (!ours || opts.claim === false) return;
  await putOwnerObject(c, t, ours, opts);
  // Created or not, the object now names the prefix's owner (read back: see the opening comment).
  const owner = await readS3OwnerObject(c, t);
  if (owner !== undefined && owner !== ours) throw refuse(owner, ownerUrl);
}

/**
 * Before a sync's run: refuse the S3 outputs that belong to another snapshot than the one at
 * `dbPath`. It reads only: the claim is made by the delivery, after its bucket checks (a bucket
 * refused for want of encryption gets no object). Only that refusal stops the run: a prefix that
 * cannot be read now (network, credentials, no bucket) is left to the delivery after the run,
 * which records why it failed.
 */
export async function checkS3Before(dbPath: string, outputs: readonly ({ readonly url: string } & S3Options)[]): Promise<void> {
  if (outputs.length === 0) return;
  const ours = await snapshotIdAt(dbPath);
  for (const o of outputs) {
    const c = await s3Client(o);
    try {
      await claimS3Prefix(c, parseS3Url(o.url, "--out"), ours, { db: dbPath, claim: false });
    } catch (e) {
      if (e instanceof OutputSnapshotError) throw e;
    } finally {
      c.destroy();
    }
  }
}

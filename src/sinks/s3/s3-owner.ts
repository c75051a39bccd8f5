/**
 * One output, one snapshot, for an S3 prefix (files/folder-owner.ts says why): a prefix belongs
 * to the snapshot its owner object names (s3-claim.ts), or, in a prefix an older benefits-sync
 * delivered to, the one whose id the manifest of its first committed run folder
 * (`prefix/00000001/manifest.json`) or table manifest (`prefix/_manifests/00000001.json`)
 * carries. A delivery or an export of another snapshot is refused (OUTPUT_SNAPSHOT, exit 2)
 * before anything is uploaded; `sync` asks before its run, so that a sync pointed at another
 * snapshot's prefix records no run (s3-claim.ts, checkS3Before).
 *
 * Reading the manifests costs a LIST of the prefix's run folders (one request per 1,000) and a
 * GET of the first manifest: run folders without a manifest (a delivery that died) are passed over.
 */
import type { S3Client } from "@aws-sdk/client-s3";
import { MANIFESTS } from "../files/table-layout.js";
import { readS3Manifest } from "./publish-folder.js";
import { s3Key, s3Url, type S3Target } from "./s3-target.js";

/** Every name directly under `s3://bucket/prefix/<under>` (sub-folders with `/`), in the store's order. */
async function namesUnder(c: S3Client, t: S3Target, under: string): Promise<string[]> {
  const { ListObjectsV2Command } = await import("@aws-sdk/client-s3");
  const base = s3Key(t, under);
  const names: string[] = [];
  let token: string | undefined;
  do {
    const r = await c.send(new ListObjectsV2Command({ Bucket: t.bucket, Prefix: base, Delimiter: "/", ContinuationToken: token }));
    for (const p of r.CommonPrefixes ?? []) if (p.Prefix) names.push(p.Prefix.slice(base.length));
    for (const o of r.Contents ?? []) if (o.Key) names.push(o.Key.slice(base.length));
    token = r.IsTruncated ? r.NextContinuationToken : undefined;
  } while (token);
  return names;
}

/** The snapshot an S3 prefix belongs to (its first committed manifest's `snapshotId`), and that manifest's URL; undefined when none names one. */
export async function s3Owner(c: S3Client, t: S3Target): Promise<{ readonly id: string; readonly manifest: string } | undefined> {
  const manifests: { folder: string; name: string; run: number }[] = [];
  for (const n of await namesUnder(c, t, "")) {
    if (/^\d+\/$/.test(n)) manifests.push({ folder: n.slice(0, -1), name: "manifest.json", run: Number(n.slice(0, -1)) });
  }
  for (const n of await namesUnder(c, t, `${MANIFESTS}/`)) {
    if (/^\d+\.json$/.test(n)) manifests.push({ folder: MANIFESTS, name: n, run: parseInt(n, 10) });
  }
  manifests.sort((a, b) => a.run - b.run);
  for (const m of manifests) {
    const id = (await readS3Manifest(c, t, m.folder, m.name))?.snapshotId;
    if (typeof id === "string") return { id, manifest: `${s3Url(t)}/${m.folder}/${m.name}` };
  }
  return undefined;
}

/**
 * One prefix, one layout: the rule a local folder follows (otherLayoutEntry, files/table-layout.ts),
 * fed with what a prefix holds. Run folders onto a prefix of tables (or tables onto run folders)
 * were taken, exit 0, where a local folder refused: a glob over the prefix then reads run folders
 * as tables. One LIST per sink: for the table layout, the first page of the prefix's names (run
 * folders, all digits, sort before every other name a delivery writes); for run folders,
 * whether `prefix/_manifests/` holds anything.
 */
import type { S3Client } from "@aws-sdk/client-s3";
import { layoutRefusal, MANIFESTS, otherLayoutEntry, type LayoutName } from "../files/table-layout.js";
import { explainS3Error } from "./s3-client.js";
import { s3Key, s3Url, type S3Target } from "./s3-target.js";

/**
 * Refuse (an OutputLayoutError, exit 2) to deliver `layout` to a prefix that holds the other one.
 * An S3 failure is an S3OutputError.
 *
 * @example await checkS3Layout(client, { bucket: "lake", prefix: "benefits" }, "folder") // throws when benefits/_manifests/ exists
 */
export async function checkS3Layout(c: S3Client, t: S3Target, layout: LayoutName): Promise<void> {
  const { ListObjectsV2Command } = await import("@aws-sdk/client-s3");
  const base = s3Key(t, "");
  const under = layout === "tables" ? base : `${base}${MANIFESTS}/`;
  let names: string[];
  try {
    const r = await c.send(new ListObjectsV2Command({ Bucket: t.bucket, Prefix: under, Delimiter: "/", ...(layout === "tables" ? {} : { MaxKeys: 1 }) }));
    names = [...(r.CommonPrefixes ?? []).map((p) => p.Prefix ?? ""), ...(r.Contents ?? []).map((o) => o.Key ?? "")].map((n) => n.slice(base.length));
  } catch (e) {
    throw explainS3Error(e, t, "reading which layout the prefix holds");
  }
  // `_manifests/<run>.json` listed under it stands for the folder itself.
  if (layout === "folder" && names.length > 0) names = [MANIFESTS];
  const other = otherLayoutEntry(names, layout);
  if (other !== undefined) throw layoutRefusal(s3Url(t), other, layout);
}

/**
 * A state or history export to `s3://bucket/prefix` (`export --state --out s3://...`): written
 * whole into a local staging folder by {@link exportState} (the same files, bytes and manifest as
 * a local export), then published as `prefix/state-00000010/...` with the manifest last
 * (s3/publish-folder.ts), after the bucket is checked as a delivery checks it. The store is
 * reached with the AWS environment's settings, as `--out s3://` of sync and export.
 */
import type { Database } from "better-sqlite3";
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import type { FileFormatName } from "../files/folder-sink.js";
import { publishFolder } from "../s3/publish-folder.js";
import { s3Client } from "../s3/s3-client.js";
import { checkBucket, STAGE } from "../s3/s3-sink.js";
import { parseS3Url, s3Url } from "../s3/s3-target.js";
import { exportState, type StateFolder } from "./state-export.js";
import { stateFolderName } from "./state-folder.js";
import type { StateKind } from "./state-views.js";

/**
 * @example await exportStateToS3(db, "state", 10, "s3://lake/benefits", "parquet") // s3://lake/benefits/state-00000010/...
 */
export async function exportStateToS3(db: Database, kind: StateKind, runId: number, url: string, format: FileFormatName): Promise<StateFolder> {
  const target = parseS3Url(url, "--out");
  const client = await s3Client({});
  await checkBucket(client, target, {});
  const stage = mkdtempSync(join(tmpdir(), `${STAGE}${process.pid}-`));
  try {
    const local = await exportState(db, kind, runId, stage, format);
    const folder = stateFolderName(kind, runId);
    await publishFolder(client, target, local.dir, folder);
    return { ...local, dir: `${s3Url(target)}/${folder}` };
  } finally {
    rmSync(stage, { recursive: true, force: true });
  }
}

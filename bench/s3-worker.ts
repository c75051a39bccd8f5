/**
 * One measurement of the S3 section, in its own process (its time its own), against the bench's
 * s3rver (bucket `bench`, credentials S3RVER/S3RVER):
 *   node dist/bench/s3-worker.js deliver DB ENDPOINT PREFIX FORMAT   our whole delivery of the
 *       snapshot's last run to s3://bench/PREFIX (deliverToSink with the S3 sink: the ledger, the
 *       run folder staged by the format's writers, the upload, the manifest last)
 *   node dist/bench/s3-worker.js stage DB FORMAT DIR                 the same run written to the local
 *       folder DIR by the same writers (exportFolder): the bytes the baselines upload
 *   node dist/bench/s3-worker.js put ENDPOINT PREFIX DIR            the baseline: every file of the run
 *       folder under DIR read and sent with the SDK's plain PutObject, all at once, to s3://bench/PREFIX
 *   node dist/bench/s3-worker.js publish ENDPOINT PREFIX DIR        our upload alone of the same folder
 *       (publishFolder: four files at once, multipart above 5 MB, the manifest last)
 * Prints one JSON line: {ms, objects, bytes} (what is under PREFIX afterwards; stage: {ms, files}).
 */
import { readdirSync } from "node:fs";
import { readFile } from "node:fs/promises";
import { join } from "node:path";
import { ListObjectsV2Command, PutObjectCommand, S3Client } from "@aws-sdk/client-s3";
import { exportFolder, fileFormat } from "../src/sinks/files/formats.js";
import type { FileFormatName } from "../src/sinks/files/folder-sink.js";
import { filesUnder, publishFolder } from "../src/sinks/s3/publish-folder.js";
import { s3Client } from "../src/sinks/s3/s3-client.js";
import { s3Sink } from "../src/sinks/s3/s3-sink.js";
import { deliverToSink } from "../src/sinks/sink.js";
import { openDatabase } from "../src/store/file/database.js";

Object.assign(process.env, { AWS_ACCESS_KEY_ID: "S3RVER", AWS_SECRET_ACCESS_KEY: "S3RVER", AWS_SDK_JS_NODE_VERSION_SUPPORT_WARNING_DISABLED: "true" });
const BUCKET = "bench";
const client = (endpoint: string) => new S3Client({ endpoint, region: "us-east-1", forcePathStyle: true });

async function under(endpoint: string, prefix: string): Promise<{ objects: number; bytes: number }> {
  const c = client(endpoint);
  let objects = 0;
  let bytes = 0;
  let token: string | undefined;
  do {
    const r = await c.send(new ListObjectsV2Command({ Bucket: BUCKET, Prefix: `${prefix}/`, ContinuationToken: token }));
    for (const o of r.Contents ?? []) {
      objects++;
      bytes += o.Size ?? 0;
    }
    token = r.NextContinuationToken;
  } while (token);
  c.destroy();
  return { objects, bytes };
}

const lastRun = (db: ReturnType<typeof openDatabase>) => db.prepare("SELECT MAX(run_id) FROM _runs WHERE status = 'succeeded'").pluck().get() as number;

async function main(): Promise<void> {
  const [mode, ...a] = process.argv.slice(2);
  let ms: number;
  let endpoint: string;
  let prefix: string;
  if (mode === "deliver") {
    const [dbPath, ep, p, format] = a as [string, string, string, FileFormatName];
    [endpoint, prefix] = [ep, p];
    // The SDK's modules loaded before the clock starts, as the baseline's are (a fixed cost of a process, not of a delivery).
    await Promise.all([import("@aws-sdk/client-s3"), import("@aws-sdk/lib-storage")]);
    const db = openDatabase(dbPath);
    const sink = s3Sink({ bucket: BUCKET, prefix }, await fileFormat(format), { endpoint, forcePathStyle: true });
    const t0 = performance.now();
    const outcome = await deliverToSink(db, sink, lastRun(db));
    ms = performance.now() - t0;
    db.close();
    if (outcome.status !== "delivered") throw new Error(`the delivery ${outcome.status}: ${outcome.error?.message}`);
  } else if (mode === "stage") {
    const [dbPath, format, dir] = a as [string, FileFormatName, string];
    const db = openDatabase(dbPath);
    const t0 = performance.now();
    await exportFolder(db, lastRun(db), dir, format);
    ms = performance.now() - t0;
    db.close();
    process.stdout.write(`${JSON.stringify({ ms, files: filesUnder(dir).length })}\n`);
    return;
  } else if (mode === "put") {
    const [ep, p, dir] = a as [string, string, string];
    [endpoint, prefix] = [ep, p];
    const c = client(endpoint);
    const t0 = performance.now();
    await Promise.all(filesUnder(dir).map(async (f) => c.send(new PutObjectCommand({ Bucket: BUCKET, Key: `${prefix}/${f}`, Body: await readFile(join(dir, f)) }))));
    ms = performance.now() - t0;
    c.destroy();
  } else if (mode === "publish") {
    const [ep, p, dir] = a as [string, string, string];
    [endpoint, prefix] = [ep, p];
    await import("@aws-sdk/lib-storage");
    const c = await s3Client({ endpoint, forcePathStyle: true });
    const [folder] = readdirSync(dir);
    const t0 = performance.now();
    await publishFolder(c, { bucket: BUCKET, prefix }, join(dir, folder!), folder!);
    ms = performance.now() - t0;
    c.destroy();
  } else {
    throw new Error(`unknown mode ${mode}`);
  }
  process.stdout.write(`${JSON.stringify({ ms, ...(await under(endpoint, prefix)) })}\n`);
}

main().catch((e: unknown) => {
  process.stderr.write(`${e instanceof Error ? e.stack : String(e)}\n`);
  process.exit(1);
});

/**
 * S3 delivery against the SDK's plain PutObject of the same bytes (issue 39's bar: >= 0.7), both
 * measured here, alternating, against one s3rver on loopback (objects on the local disk): a staged
 * run folder of BENCH_S3_FILES files (7) of BENCH_S3_MB MB in all (60; the largest over 5 MB, so a
 * multipart upload is part of it) plus its manifest, published by publishFolder (data first,
 * manifest last) vs one PutObject per file in turn. Run: `npm run build && node dist/bench/s3-delivery.js`.
 */
import { randomBytes } from "node:crypto";
import { mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import type { AddressInfo } from "node:net";
import { PutObjectCommand } from "@aws-sdk/client-s3";
import { s3Client } from "../src/sinks/s3/s3-client.js";
import { filesUnder, publishFolder } from "../src/sinks/s3/publish-folder.js";

const num = (k: string, d: number) => (process.env[k] !== undefined ? Number(process.env[k]) : d);
const FILES = num("BENCH_S3_FILES", 7);
const MB = num("BENCH_S3_MB", 60);
const REPEAT = num("BENCH_S3_REPEAT", 3);
const median = (xs: number[]) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)]!;

async function main(): Promise<void> {
  const { default: S3rver } = (await import("s3rver" as string)) as { default: new (o: object) => { run(): Promise<AddressInfo>; close(): Promise<void> } };
  const root = mkdtempSync(join(tmpdir(), "bench-s3-"));
  const server = new S3rver({ port: 0, address: "127.0.0.1", silent: true, directory: join(root, "store"), configureBuckets: [{ name: "bench" }] });
  const { port } = await server.run();
  Object.assign(process.env, { AWS_ACCESS_KEY_ID: "S3RVER", AWS_SECRET_ACCESS_KEY: "S3RVER" });
  const client = await s3Client({ endpoint: `http://127.0.0.1:${port}`, forcePathStyle: true });
  const stage = join(root, "00000010");
  mkdirSync(stage);
  // One large file (half the bytes: a member file), the rest shared out.
  const total = MB * 1024 * 1024;
  for (let i = 0; i < FILES; i++) writeFileSync(join(stage, `f${i}.csv`), randomBytes(i === 0 ? total / 2 : Math.floor(total / 2 / (FILES - 1))));
  writeFileSync(join(stage, "manifest.json"), JSON.stringify({ runId: 10, runs: [10], files: [] }));
  const ours: number[] = [];
  const bare: number[] = [];
  try {
    for (let r = 0; r < REPEAT; r++) {
      let t = performance.now();
      await publishFolder(client, { bucket: "bench", prefix: `ours${r}` }, stage, "00000010");
      ours.push(performance.now() - t);
      t = performance.now();
      for (const f of filesUnder(stage)) await client.send(new PutObjectCommand({ Bucket: "bench", Key: `bare${r}/00000010/${f}`, Body: readFileSync(join(stage, f)) }));
      bare.push(performance.now() - t);
    }
  } finally {
    client.destroy();
    await server.close();
    rmSync(root, { recursive: true, force: true });
  }
  const ratio = median(bare) / median(ours);
  const secs = (ms: number) => `${(ms / 1000).toFixed(2)} s`;
  console.log(`S3 delivery of a run folder (${FILES} files, ${MB} MB) vs plain PutObject of the same bytes: ${ratio.toFixed(3)} of its speed (${secs(median(ours))} vs ${secs(median(bare))}) ${ratio >= 0.7 ? "ok" : "BELOW 0.7"}`);
}

await main();

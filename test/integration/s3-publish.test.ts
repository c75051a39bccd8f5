/**
 * publishFolder (src/sinks/s3/publish-folder.ts) against a real S3 server on loopback (s3rver
 * behind test/helpers/s3-server.ts), driven by the real SDK: a file over 5 MB goes as a multipart
 * upload (from 100 MB by default; here from 5 MB, in 5 MB parts) and arrives byte for byte; the manifest is the last PUT; readS3Manifest reads it back.
 * And the client's deadlines (s3-client.ts) against a loopback store that accepts every
 * connection and never answers: an upload fails as unreachable after its bounded attempts.
 */
import { randomBytes } from "node:crypto";
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { createServer, type IncomingMessage } from "node:http";
import type { AddressInfo } from "node:net";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { S3Codes, s3Client } from "../../src/sinks/s3/s3-client.js";
import { publishFolder, readS3Manifest, uploadFile } from "../../src/sinks/s3/publish-folder.js";
import { EVENT_DEADLINE_MS, waitUntil } from "../helpers/wait.js";
import { startS3Server, type S3TestServer } from "../helpers/s3-server.js";

let s3: S3TestServer;
let dir: string;
beforeAll(async () => {
  s3 = await startS3Server(["lake"]);
  dir = mkdtempSync(join(tmpdir(), "bsync-s3pub-"));
  for (const [k, v] of Object.entries(s3.env)) if (k !== "AWS_ENDPOINT_URL_S3") process.env[k] = v;
});
afterAll(async () => {
  await s3?.close();
  if (dir) rmSync(dir, { recursive: true, force: true });
});

describe("publishFolder", () => {
  it("uploads a file over 5 MB as a multipart upload (multipart from 5 MB) with the same bytes, sub-folders too, and the manifest last; readS3Manifest reads it", async () => {
    const stage = join(dir, "00000010");
    mkdirSync(join(stage, "members"), { recursive: true });
    const MB = 1024 * 1024;
    const big = randomBytes(11 * MB);
    writeFileSync(join(stage, "members.parquet"), big);
    writeFileSync(join(stage, "members", "part-00000.csv"), "op,id\r\n");
    const manifest = { runId: 10, format: "parquet", runs: [10], files: [] };
    writeFileSync(join(stage, "manifest.json"), JSON.stringify(manifest));
    const client = await s3Client({ endpoint: s3.endpoint, forcePathStyle: true });
    const before = s3.requests.length;
    const out = await publishFolder(client, { bucket: "lake", prefix: "pub" }, stage, "00000010", { multipart: { from: 5 * MB, partSize: 5 * MB } });
    expect(out.keys.at(-1)).toBe("pub/00000010/manifest.json");
    const seen = s3.requests.slice(before);
    expect(seen.some((r) => r.method === "POST" && r.path === "/lake/pub/00000010/members.parquet" && r.query.includes("uploads"))).toBe(true);
    expect(seen.filter((r) => r.method === "PUT" && r.path === "/lake/pub/00000010/members.parquet" && r.query.includes("partNumber")).length).toBe(3);
    expect(seen.filter((r) => r.method === "PUT" || r.method === "POST").at(-1)!.path).toBe("/lake/pub/00000010/manifest.json");
    expect((await s3.object("lake", "pub/00000010/members.parquet")).equals(big)).toBe(true);
    expect((await s3.object("lake", "pub/00000010/members/part-00000.csv")).toString()).toBe("op,id\r\n");
    expect(await readS3Manifest(client, { bucket: "lake", prefix: "pub" }, "00000010")).toEqual(manifest);
    expect(await readS3Manifest(client, { bucket: "lake", prefix: "pub" }, "00000011")).toBeUndefined();
    client.destroy();
  });
});

describe("the S3 client's deadlines", () => {
  it("a store that accepts the connection and never answers a PUT: the upload fails as unreachable after 3 attempts (a 300 ms idle deadline here), each one cut", async () => {
    const seen: IncomingMessage[] = [];
    const silent = createServer((req) => void seen.push(req)); // reads nothing, answers nothing
    await new Promise<void>((r) => silent.listen(0, "127.0.0.1", r));
    const file = join(dir, "one.csv");
    writeFileSync(file, "op,id\r\n");
    const client = await s3Client({ endpoint: `http://127.0.0.1:${(silent.address() as AddressInfo).port}`, forcePathStyle: true }, { deadlines: { connectMs: 1000, idleMs: 300, requestMs: 5000, attempts: 3 } });
    let timer: NodeJS.Timeout | undefined;
    try {
      const failed = await Promise.race([
        uploadFile(client, { bucket: "lake", prefix: "silent" }, file, "00000001/one.csv").then(
          () => undefined,
          (e: unknown) => e as { code?: string; message?: string },
        ),
        new Promise<never>((_, reject) => (timer = setTimeout(() => reject(new Error(`the upload still waited ${EVENT_DEADLINE_MS} ms on a store that never answers`)), EVENT_DEADLINE_MS))),
      ]);
      expect(failed?.code).toBe(S3Codes.unreachable);
      expect(failed?.message).toMatch(/could not be reached while uploading 00000001\/one.csv \(TimeoutError\)/);
      expect(seen.filter((r) => r.method === "PUT" && new URL(r.url ?? "", "http://x").pathname === "/lake/silent/00000001/one.csv").length).toBe(3);
      // Each attempt was given up: the store holds no connection of it any more.
      await waitUntil("the client to close every connection it gave up", () => seen.every((r) => r.socket.destroyed));
    } finally {
      clearTimeout(timer);
      client.destroy();
      silent.closeAllConnections();
      await new Promise<void>((r) => silent.close(() => r()));
    }
  });
});

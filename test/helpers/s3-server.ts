/**
 * A real S3 server on loopback for the tests: `s3rver` (the S3 REST API over HTTP, objects on
 * disk, SigV4 checked: it knows only the access key S3RVER/S3RVER, any other is
 * InvalidAccessKeyId), started on port 0, behind a small loopback shim that
 *
 * - records every request (method, path, query, SSE header), so a test sees what the SDK sent
 *   (a multipart upload, the order of PUTs);
 * - answers GetBucketEncryption (`GET /bucket?encryption`) for the buckets a test configured,
 *   which s3rver does not implement (it answers NotImplemented, passed through for other buckets);
 * - can hold a request (not forward it) until the test lets go, so a test can kill a writer at an
 *   observed point (its first data PUT has reached the server) rather than after a sleep;
 * - honours `If-None-Match: *` on a PUT (S3's conditional create, how a delivery claims a prefix,
 *   src/sinks/s3/s3-claim.ts), which s3rver 3.7.1 does not: it honours the header on GET and
 *   HEAD only (lib/controllers/object.js, getObject's 304) and stores the PUT over the object
 *   there. Here such a PUT of a key that exists is answered 412 PreconditionFailed as S3 answers
 *   it, unforwarded; the check and the PUT are one step per key (conditional PUTs of one key wait
 *   for each other), so that of two at once exactly one creates the object.
 *
 * Everything else is forwarded byte for byte, Host header included (the signature covers it).
 * Never skipped: a test that cannot start it fails (CI=true or not).
 */
import { createServer, request, type IncomingMessage, type Server, type ServerResponse } from "node:http";
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import type { AddressInfo } from "node:net";
import { DeleteObjectCommand, GetObjectCommand, HeadObjectCommand, ListObjectsV2Command, S3Client } from "@aws-sdk/client-s3";

export interface SeenRequest {
  readonly method: string;
  readonly path: string;
  readonly query: string;
  readonly sse: string | undefined;
  /** The SDK's user agent (with `app/ID` when the writer set AWS_SDK_UA_APP_ID=ID): which process sent it. */
  readonly agent: string;
}

export interface S3TestServer {
  /** `http://127.0.0.1:PORT`: the shim's address (what a sink's endpoint is). */
  readonly endpoint: string;
  readonly requests: SeenRequest[];
  /** Credentials s3rver accepts, as the SDK's environment variables. */
  readonly env: Record<string, string>;
  /** Hold the first request matching `match` until `release`; `held` resolves when it arrived. */
  hold(match: (r: SeenRequest) => boolean): { held: Promise<SeenRequest>; release: () => void };
  /** Every key under `prefix` in `bucket`, sorted. */
  keys(bucket: string, prefix?: string): Promise<string[]>;
  object(bucket: string, key: string): Promise<Buffer>;
  /** Delete one object (what a prefix an older benefits-sync wrote lacks). */
  remove(bucket: string, key: string): Promise<void>;
  close(): Promise<void>;
}

const ENCRYPTION_XML = (alg: string) =>
  `<?xml version="1.0" encoding="UTF-8"?><ServerSideEncryptionConfiguration xmlns="http://s3.amazonaws.com/doc/2006-03-01/"><Rule><ApplyServerSideEncryptionByDefault><SSEAlgorithm>${alg}</SSEAlgorithm></ApplyServerSideEncryptionByDefault></Rule></ServerSideEncryptionConfiguration>`;
const PRECONDITION_FAILED_XML = `<?xml version="1.0" encoding="UTF-8"?><Error><Code>PreconditionFailed</Code><Message>At least one of the pre-conditions you specified did not hold</Message><Condition>If-None-Match</Condition></Error>`;
const NO_ENCRYPTION_XML = `<?xml version="1.0" encoding="UTF-8"?><Error><Code>ServerSideEncryptionConfigurationNotFoundError</Code><Message>The server side encryption configuration was not found</Message></Error>`;

/**
 * @param buckets created empty at start
 * @param encryption per bucket: its default encryption ("AES256"), or "none" (answered as S3 does
 *   for a bucket without one); a bucket not named gets s3rver's NotImplemented.
 */
export async function startS3Server(buckets: readonly string[], encryption: Readonly<Record<string, "AES256" | "aws:kms" | "none">> = {}): Promise<S3TestServer> {
  const { default: S3rver } = (await import("s3rver" as string)) as { default: new (o: object) => { run(): Promise<AddressInfo>; close(): Promise<void> } };
  const directory = mkdtempSync(join(tmpdir(), "bsync-s3rver-"));
  const s3rver = new S3rver({ port: 0, address: "127.0.0.1", silent: true, directory, configureBuckets: buckets.map((name) => ({ name })) });
  const inner = await s3rver.run();
  const requests: SeenRequest[] = [];
  const holds: { match: (r: SeenRequest) => boolean; arrived: (r: SeenRequest) => void; gate: Promise<void> }[] = [];
  const shim: Server = createServer((req, res) => void handle(req, res));
  async function handle(req: IncomingMessage, res: ServerResponse): Promise<void> {
    const url = new URL(req.url ?? "/", "http://x");
    const seen: SeenRequest = {
      method: req.method ?? "",
      path: decodeURIComponent(url.pathname),
      query: url.search,
      sse: req.headers["x-amz-server-side-encryption"] as string | undefined,
      agent: `${req.headers["user-agent"] ?? ""} ${req.headers["x-amz-user-agent"] ?? ""}`,
    };
    requests.push(seen);
    const h = holds.findIndex((x) => x.match(seen));
    if (h >= 0) {
      const [hold] = holds.splice(h, 1);
      hold!.arrived(seen);
      await hold!.gate;
      req.destroy();
      res.destroy();
      return;
    }
    const bucket = seen.path.split("/")[1] ?? "";
    if (req.method === "GET" && url.searchParams.has("encryption") && encryption[bucket] !== undefined) {
      req.resume();
      const alg = encryption[bucket]!;
      res.writeHead(alg === "none" ? 404 : 200, { "content-type": "application/xml" }).end(alg === "none" ? NO_ENCRYPTION_XML : ENCRYPTION_XML(alg));
      return;
    }
    if (req.method === "PUT" && req.headers["if-none-match"] === "*") return createOnly(seen.path, req, res);
    forward(req, res);
  }
  function forward(req: IncomingMessage, res: ServerResponse): Promise<void> {
    return new Promise<void>((done) => {
      const fwd = request({ host: "127.0.0.1", port: inner.port, method: req.method, path: req.url, headers: req.headers }, (up) => {
        res.writeHead(up.statusCode ?? 502, up.headers);
        up.pipe(res);
        up.on("end", done);
        up.on("error", done);
      });
      fwd.on("error", () => (res.destroy(), done()));
      req.pipe(fwd);
    });
  }
  /** A PUT with `If-None-Match: *`: 412 when the key exists, else forwarded; one at a time per key. */
  const creating = new Map<string, Promise<void>>();
  function createOnly(path: string, req: IncomingMessage, res: ServerResponse): Promise<void> {
    const [, bucket = "", ...rest] = path.split("/");
    const step = (creating.get(path) ?? Promise.resolve()).then(async () => {
      const exists = await client.send(new HeadObjectCommand({ Bucket: bucket, Key: rest.join("/") })).then(
        () => true,
        () => false,
      );
      if (!exists) return forward(req, res);
      req.resume();
      res.writeHead(412, { "content-type": "application/xml" }).end(PRECONDITION_FAILED_XML);
    });
    creating.set(path, step);
    return step;
  }
  await new Promise<void>((r) => shim.listen(0, "127.0.0.1", r));
  const endpoint = `http://127.0.0.1:${(shim.address() as AddressInfo).port}`;
  const env = { AWS_ACCESS_KEY_ID: "S3RVER", AWS_SECRET_ACCESS_KEY: "S3RVER", AWS_REGION: "us-east-1", AWS_ENDPOINT_URL_S3: endpoint };
  // The SDK's Node 20 notice, off the way the CLI turns it off (src/sinks/s3/s3-client.ts): else every test file's first client prints it.
  process.env.AWS_SDK_JS_NODE_VERSION_SUPPORT_WARNING_DISABLED ??= "true";
  const client = new S3Client({ region: "us-east-1", endpoint: `http://127.0.0.1:${inner.port}`, forcePathStyle: true, credentials: { accessKeyId: "S3RVER", secretAccessKey: "S3RVER" } });
  return {
    endpoint,
    requests,
    env,
    hold(match) {
      let release!: () => void;
      const gate = new Promise<void>((r) => (release = r));
      let arrived!: (r: SeenRequest) => void;
      const held = new Promise<SeenRequest>((r) => (arrived = r));
      holds.push({ match, arrived, gate });
      return { held, release };
    },
    async keys(bucket, prefix = "") {
      const out: string[] = [];
      let token: string | undefined;
      do {
        const r = await client.send(new ListObjectsV2Command({ Bucket: bucket, Prefix: prefix, ...(token ? { ContinuationToken: token } : {}) }));
        out.push(...(r.Contents ?? []).map((c) => c.Key!));
        token = r.IsTruncated ? r.NextContinuationToken : undefined;
      } while (token);
      return out.sort();
    },
    async object(bucket, key) {
      const r = await client.send(new GetObjectCommand({ Bucket: bucket, Key: key }));
      return Buffer.from(await r.Body!.transformToByteArray());
    },
    async remove(bucket, key) {
      await client.send(new DeleteObjectCommand({ Bucket: bucket, Key: key }));
    },
    async close() {
      for (const h of holds.splice(0)) h.arrived({ method: "", path: "", query: "", sse: undefined, agent: "" });
      client.destroy();
      shim.closeAllConnections();
      await new Promise<void>((r) => shim.close(() => r()));
      await s3rver.close();
      rmSync(directory, { recursive: true, force: true });
    },
  };
}

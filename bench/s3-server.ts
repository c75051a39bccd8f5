/**
 * The S3 section's server, in its own process (as a store on the network would be): s3rver on
 * loopback, port 0, objects under DIR, one bucket `bench`. Prints one JSON line {endpoint} once
 * it listens, and stops on SIGTERM.
 *   node dist/bench/s3-server.js DIR
 */
import type { AddressInfo } from "node:net";

const dir = process.argv[2];
if (!dir) throw new Error("usage: s3-server.js DIR");
const { default: S3rver } = (await import("s3rver" as string)) as { default: new (o: object) => { run(): Promise<AddressInfo>; close(): Promise<void> } };
const server = new S3rver({ port: 0, address: "127.0.0.1", silent: true, directory: dir, configureBuckets: [{ name: "bench" }] });
const { port } = await server.run();
process.stdout.write(`${JSON.stringify({ endpoint: `http://127.0.0.1:${port}` })}\n`);
process.once("SIGTERM", () => void server.close().then(() => process.exit(0)));

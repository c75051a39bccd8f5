/**
 * A page's body is read as the chunks it arrived in and fingerprinted over them, never joined when
 * it is recognised: the fingerprint must not depend on how the bytes were cut on the wire, and a
 * body cut short must fail the request like any broken connection.
 */
import { setTimeout as sleep } from "node:timers/promises";
import { describe, expect, it } from "vitest";
import { createClient } from "../../../src/api/client.js";
import { TransportError } from "../../../src/errors.js";
import { Encoder } from "../../../src/store/prepare-page.js";
import { TEST_PII_KEY } from "../../helpers/temp-store.js";
import { apiTestFixture, oid } from "./harness.js";

const KEY = "chunk-key-8d21c0e94b7a";
const { probe, start } = apiTestFixture(KEY);
const encoder = new Encoder({ piiKey: TEST_PII_KEY });

const page = JSON.stringify({ data: Array.from({ length: 40 }, (_, i) => ({ id: oid(i), firstName: "Ana", lastName: `L${i}` })), hasMore: false });
const body = Buffer.from(page);

/** Serve the page in `parts` writes, a pause between them so that each arrives as its own chunk. */
const inParts = (parts: number) =>
  start(async (_req, res) => {
    res.writeHead(200, { "content-type": "application/json" });
    const size = Math.ceil(body.length / parts);
    for (let at = 0; at < body.length; at += size) {
      res.write(body.subarray(at, at + size));
      await sleep(30);
    }
    res.end();
  });

describe("a page read in chunks", () => {
  it("has the fingerprint of its whole bytes however it was cut, and is recognised without its items", async () => {
    const whole = encoder.pageFingerprint([body]);
    for (const parts of [1, 3, 7]) {
      const server = await inParts(parts);
      const c = createClient({ baseUrl: server.url, apiKey: KEY, logger: probe.logger });
      const cuts: number[] = [];
      const known = {
        fingerprint: (chunks: readonly Uint8Array[]) => {
          cuts.push(chunks.length);
          return encoder.pageFingerprint(chunks);
        },
        lookup: (_after: string | undefined, fp: number) => (fp === whole ? { next: undefined } : undefined),
      };
      const pages = [];
      for await (const p of c.rawPages("members", {}, { known })) pages.push(p);
      expect(pages).toHaveLength(1);
      expect(pages[0]!.known).toBe(true);
      expect(pages[0]!.fp).toBe(whole);
      expect(pages[0]!.items).toEqual([]);
      // The bytes really came in as many pieces as they were sent in (at least, for 3 and 7).
      if (parts > 1) expect(cuts[0]).toBeGreaterThan(1);
      await c.close();
      await server.close();
    }
  });

  it("an unknown page cut in pieces is joined and read whole", async () => {
    const server = await inParts(5);
    const c = createClient({ baseUrl: server.url, apiKey: KEY, logger: probe.logger });
    const known = { fingerprint: (chunks: readonly Uint8Array[]) => encoder.pageFingerprint(chunks), lookup: () => undefined };
    const items: string[] = [];
    for await (const p of c.rawPages("members", {}, { known })) items.push(...p.items);
    expect(items.map((t) => (JSON.parse(t) as { id: string }).id)).toEqual(Array.from({ length: 40 }, (_, i) => oid(i)));
    await c.close();
    await server.close();
  });

  it("a body cut short by the server fails the request as a broken connection, retried, then thrown", async () => {
    const server = await start((_req, res) => {
      res.writeHead(200, { "content-type": "application/json", "content-length": String(body.length) });
      res.write(body.subarray(0, 100));
      setTimeout(() => res.destroy(), 20);
    });
    const c = createClient({ baseUrl: server.url, apiKey: KEY, logger: probe.logger, retry: { maxAttempts: 2 }, sleep: async () => {} });
    const err = await probe.reject(
      (async () => {
        for await (const _ of c.rawPages("members")) void _;
      })(),
    );
    expect(err).toBeInstanceOf(TransportError);
    expect((err as TransportError).retryable).toBe(true);
    expect(server.hits).toHaveLength(2);
    await c.close();
  });
});

/**
 * A page's body is read as the chunks it arrived in and fingerprinted over them, never joined when
 * it is recognised: the fingerprint must not depend on how the bytes were cut on the wire, and a
 * body cut short must fail the request like any broken connection.
 */
import { Agent, type Dispatcher } from "undici";
import { afterEach, describe, expect, it } from "vitest";
import { createClient } from "../../../src/api/client.js";
import { TransportError } from "../../../src/errors.js";
import { Encoder } from "../../../src/store/walk/prepare-page.js";
import { TEST_PII_KEY } from "../../helpers/temp-store.js";
import { apiTestFixture, oid } from "./harness.js";

const KEY = "chunk-key-8d21c0e94b7a";
const { probe, start } = apiTestFixture(KEY);
const encoder = new Encoder({ piiKey: TEST_PII_KEY });

const page = JSON.stringify({ data: Array.from({ length: 40 }, (_, i) => ({ id: oid(i), firstName: "Ana", lastName: `L${i}` })), hasMore: false });
const body = Buffer.from(page);

/**
 * The client's own Agent, watched: `taken(n)` resolves once the client has been handed `n` bytes of
 * bodies in all. A server that waits for it before its next write knows the bytes before arrived as
 * their own chunks, however late a loaded machine delivers them (no pause of a fixed length).
 */
function watchedAgent(): { dispatcher: Dispatcher; taken(bytes: number): Promise<void> } {
  const agent = new Agent();
  agents.push(agent);
  let received = 0;
  const waiting: { bytes: number; resolve: () => void }[] = [];
  const passOn = (h: Dispatcher.DispatchHandler): Dispatcher.DispatchHandler => ({
    onRequestStart: (c, ctx) => h.onRequestStart?.(c, ctx),
    onRequestUpgrade: (c, status, headers, socket) => h.onRequestUpgrade?.(c, status, headers, socket),
    onResponseStart: (c, status, headers, message) => h.onResponseStart?.(c, status, headers, message),
    onResponseData: (c, chunk) => {
      h.onResponseData?.(c, chunk);
      received += chunk.length;
      for (const w of waiting.filter((x) => x.bytes <= received)) {
        waiting.splice(waiting.indexOf(w), 1);
        w.resolve();
      }
    },
    onResponseEnd: (c, trailers) => h.onResponseEnd?.(c, trailers),
    onResponseError: (c, err) => h.onResponseError?.(c, err),
  });
  return {
    dispatcher: agent.compose((dispatch) => (opts, handler) => dispatch(opts, passOn(handler))),
    taken: (bytes) => (bytes <= received ? Promise.resolve() : new Promise((resolve) => waiting.push({ bytes, resolve }))),
  };
}
const agents: Agent[] = [];
afterEach(async () => {
  await Promise.all(agents.splice(0).map((a) => a.close()));
});

/** Serve the page in `parts` writes, each once the client has taken in the one before, so that each arrives as its own chunk. */
async function inParts(parts: number) {
  const watched = watchedAgent();
  const server = await start(async (_req, res) => {
    res.writeHead(200, { "content-type": "application/json" });
    const size = Math.ceil(body.length / parts);
    for (let at = 0; at < body.length; at += size) {
      const part = body.subarray(at, at + size);
      res.write(part);
      await watched.taken(at + part.length);
    }
    res.end();
  });
  return { server, dispatcher: watched.dispatcher };
}

describe("a page read in chunks", () => {
  it("has the fingerprint of its whole bytes however it was cut, and is recognised without its items", async () => {
    const whole = encoder.pageFingerprint([body]);
    for (const parts of [1, 3, 7]) {
      const { server, dispatcher } = await inParts(parts);
      const c = createClient({ baseUrl: server.url, apiKey: KEY, logger: probe.logger, dispatcher });
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
      // The bytes really came in as many pieces as they were sent in (or more).
      expect(cuts[0]).toBeGreaterThanOrEqual(parts);
      await c.close();
      await server.close();
    }
  });

  it("an unknown page cut in pieces is joined and read whole", async () => {
    const { server, dispatcher } = await inParts(5);
    const c = createClient({ baseUrl: server.url, apiKey: KEY, logger: probe.logger, dispatcher });
    const known = { fingerprint: (chunks: readonly Uint8Array[]) => encoder.pageFingerprint(chunks), lookup: () => undefined };
    const items: string[] = [];
    for await (const p of c.rawPages("members", {}, { known })) items.push(...p.items);
    expect(items.map((t) => (JSON.parse(t) as { id: string }).id)).toEqual(Array.from({ length: 40 }, (_, i) => oid(i)));
    await c.close();
    await server.close();
  });

  it("a body cut short by the server fails the request as a broken connection, retried, then thrown", async () => {
    // Cut once the client has its first 100 bytes: the answer had begun, its body is short.
    const watched = watchedAgent();
    let written = 0;
    const server = await start(async (_req, res) => {
      res.writeHead(200, { "content-type": "application/json", "content-length": String(body.length) });
      res.write(body.subarray(0, 100));
      await watched.taken((written += 100));
      res.destroy();
    });
    const c = createClient({ baseUrl: server.url, apiKey: KEY, logger: probe.logger, retry: { maxAttempts: 2 }, sleep: async () => {}, dispatcher: watched.dispatcher });
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

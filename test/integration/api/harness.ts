/**
 * Test harness for the client's integration tests: a scripted `node:http` server on port 0, and a
 * probe that records every log line and every error the tests see, so that each file can assert
 * the API key appeared in none of them.
 */
import { createServer, type IncomingMessage, type Server, type ServerResponse } from "node:http";
import type { AddressInfo } from "node:net";
import { afterAll, afterEach, expect } from "vitest";
import type { Logger } from "../../../src/api/logger.js";

export interface Hit {
  method: string;
  path: string;
  url: URL;
  headers: IncomingMessage["headers"];
  body: string;
  at: number;
}

export type Handler = (req: IncomingMessage, res: ServerResponse, hit: Hit, n: number) => unknown;

export interface TestServer {
  url: string;
  hits: Hit[];
  close(): Promise<void>;
}

/** Start a server on 127.0.0.1, port 0, that records each request (body included) and hands it to `handler`. */
export async function startServer(handler: Handler): Promise<TestServer> {
  const hits: Hit[] = [];
  const server: Server = createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on("data", (c: Buffer) => chunks.push(c));
    req.on("end", () => {
      const url = new URL(req.url ?? "/", "http://x");
      const hit: Hit = {
        method: req.method ?? "",
        path: url.pathname,
        url,
        headers: req.headers,
        body: Buffer.concat(chunks).toString("utf8"),
        at: performance.now(),
      };
      hits.push(hit);
      void Promise.resolve(handler(req, res, hit, hits.length - 1)).catch((err: unknown) => {
        res.destroy(err instanceof Error ? err : new Error(String(err)));
      });
    });
  });
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  const { port } = server.address() as AddressInfo;
  return {
    url: `http://127.0.0.1:${port}`,
    hits,
    close: () =>
      new Promise<void>((resolve) => {
        server.closeAllConnections();
        server.close(() => resolve());
      }),
  };
}

/** Answer JSON with a status and optional headers. */
export function json(res: ServerResponse, status: number, body: unknown, headers: Record<string, string> = {}): void {
  const text = JSON.stringify(body);
  res.writeHead(status, { "content-type": "application/json", "content-length": Buffer.byteLength(text), ...headers });
  res.end(text);
}

/** Records log lines and errors; `assertClean()` fails if the key shows up in any of them. */
export class KeyProbe {
  readonly lines: string[] = [];
  readonly errors: unknown[] = [];
  readonly logger: Logger;
  constructor(readonly key: string) {
    const rec = (level: string) => (msg: string, fields?: Record<string, unknown>) => {
      this.lines.push(`${level} ${msg} ${JSON.stringify(fields ?? {})}`);
    };
    this.logger = { debug: rec("debug"), info: rec("info"), warn: rec("warn") };
  }

  /** Await a promise that must reject; record and return its error. */
  async reject(p: Promise<unknown>): Promise<unknown> {
    try {
      await p;
    } catch (err) {
      this.errors.push(err);
      return err;
    }
    throw new Error("expected the promise to reject");
  }

  /** Every text an error exposes: message, stack, enumerable fields, and the same for its causes. */
  static texts(err: unknown, depth = 0): string[] {
    if (depth > 4 || err === null || err === undefined) return [];
    if (!(err instanceof Error)) return [String(err)];
    let fields = "";
    try {
      fields = JSON.stringify(err);
    } catch {
      fields = "";
    }
    return [err.message, err.stack ?? "", fields, String(err), ...KeyProbe.texts((err as { cause?: unknown }).cause, depth + 1)];
  }

  assertClean(): void {
    const haystack = [...this.lines, ...this.errors.flatMap((e) => KeyProbe.texts(e))];
    const leaks = haystack.filter((t) => t.includes(this.key));
    expect(leaks).toEqual([]);
  }
}

/** An object id that sorts like the service's: zero-padded. */
export const oid = (n: number) => `id-${String(n).padStart(5, "0")}`;

/**
 * The set-up every client integration file shares: a key probe checked once the file's tests are
 * done, and `start()` for servers that are closed after each test.
 */
export function apiTestFixture(key: string): { probe: KeyProbe; start: (handler: Handler) => Promise<TestServer> } {
  const probe = new KeyProbe(key);
  const open: TestServer[] = [];
  afterEach(async () => {
    await Promise.all(open.splice(0).map((s) => s.close()));
  });
  afterAll(() => probe.assertClean());
  return {
    probe,
    start: async (handler) => {
      const server = await startServer(handler);
      open.push(server);
      return server;
    },
  };
}

/**
 * `GET /metrics` for a platform's scraper (Prometheus exposition, prom-client's registry), on a
 * listener of its own: off unless a port is given, on loopback unless a host is. The receiver's
 * webhook port faces the service; the metrics never share it.
 *
 * @example const m = await startMetricsEndpoint(registry, { port: 9464, host: "127.0.0.1" }); console.log(m.url);
 */
import { createServer, type IncomingMessage, type ServerResponse } from "node:http";
import type { AddressInfo } from "node:net";
import type { Registry } from "prom-client";
import { ConfigError } from "../errors.js";

export interface MetricsEndpoint {
  /** `http://HOST:PORT/metrics`. */
  readonly url: string;
  close(): Promise<void>;
}

/** The default address: only this machine scrapes unless told otherwise. */
export const DEFAULT_METRICS_HOST = "127.0.0.1";

function answer(res: ServerResponse, status: number, text: string, headers: Record<string, string> = {}): void {
  res.writeHead(status, { "content-type": "text/plain; charset=utf-8", "cache-control": "no-store", "content-length": String(Buffer.byteLength(text)), ...headers });
  res.end(text);
}

/** Serve `registry` at `GET /metrics` (and HEAD); anything else is 404 or 405. */
export async function startMetricsEndpoint(registry: Registry, at: { port: number; host?: string | undefined }): Promise<MetricsEndpoint> {
  const host = at.host ?? DEFAULT_METRICS_HOST;
  const server = createServer((req: IncomingMessage, res: ServerResponse) => {
    const path = (req.url ?? "/").split("?")[0];
    if (path !== "/metrics") return answer(res, 404, "metrics are at GET /metrics\n");
    if (req.method !== "GET" && req.method !== "HEAD") return answer(res, 405, "GET /metrics\n", { allow: "GET, HEAD" });
    registry.metrics().then(
      (text) => {
        res.writeHead(200, { "content-type": registry.contentType, "cache-control": "no-store", "content-length": String(Buffer.byteLength(text)) });
        res.end(req.method === "HEAD" ? undefined : text);
      },
      (e: unknown) => answer(res, 500, `metrics could not be collected: ${e instanceof Error ? e.message : String(e)}\n`),
    );
  });
  server.headersTimeout = 10_000;
  server.requestTimeout = 30_000;
  await new Promise<void>((resolve, reject) => {
    server.once("error", reject);
    server.listen(at.port, host, () => {
      server.off("error", reject);
      resolve();
    });
  });
  const address = server.address() as AddressInfo;
  const shown = address.family === "IPv6" ? `[${address.address}]` : address.address;
  return {
    url: `http://${shown}:${address.port}/metrics`,
    close: () =>
      new Promise<void>((resolve) => {
        server.close(() => resolve());
        server.closeAllConnections();
      }),
  };
}

/** {@link startMetricsEndpoint} for the commands' `--metrics-port` and `--metrics-host`: a port it cannot take is a ConfigError naming them. */
export async function serveMetrics(registry: Registry, at: { port: number; host?: string | undefined }): Promise<MetricsEndpoint> {
  try {
    return await startMetricsEndpoint(registry, at);
  } catch (e) {
    const code = (e as { code?: string }).code ?? (e instanceof Error ? e.message : String(e));
    throw new ConfigError([`--metrics-port: cannot listen on ${at.host ?? DEFAULT_METRICS_HOST}:${at.port} (${code}); choose another port or host (--metrics-port, --metrics-host)`]);
  }
}

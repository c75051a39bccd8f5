/**
 * A stand-in for a chat webhook or any HTTP receiver: a node:http server on loopback that keeps
 * every request it is sent (path, content type, body), answering 200, or what `statusOf` says.
 */
import { createServer } from "node:http";
import type { AddressInfo } from "node:net";

export interface Received {
  readonly path: string;
  readonly contentType: string | undefined;
  readonly body: string;
}

export interface Receiver {
  /** `http://127.0.0.1:PORT`, no trailing slash. */
  readonly url: string;
  readonly received: Received[];
  close(): Promise<void>;
}

export async function startReceiver(statusOf: (path: string) => number = () => 200): Promise<Receiver> {
  const received: Received[] = [];
  const server = createServer((req, res) => {
    let body = "";
    req.on("data", (d: Buffer) => (body += d.toString()));
    req.on("end", () => {
      received.push({ path: req.url ?? "", contentType: req.headers["content-type"], body });
      res.writeHead(statusOf(req.url ?? "")).end("ok");
    });
  });
  await new Promise<void>((r) => server.listen(0, "127.0.0.1", r));
  return {
    url: `http://127.0.0.1:${(server.address() as AddressInfo).port}`,
    received,
    close: () => new Promise<void>((r) => server.close(() => r())),
  };
}

/** Small HTTP helpers: the service's error body everywhere, JSON bodies with a size limit. */
import type { IncomingMessage, ServerResponse } from "node:http";

export interface Issue {
  path: (string | number)[];
  message: string;
  code: string;
}

/** A handler's way to answer an error: thrown, caught by the router, written as the error body. */
export class HttpError extends Error {
  constructor(
    readonly status: number,
    message: string,
    readonly errors?: Issue[],
  ) {
    super(message);
  }
}

export function sendJson(res: ServerResponse, status: number, body: unknown, headers: Record<string, string> = {}): void {
  const text = typeof body === "string" ? body : JSON.stringify(body);
  res.writeHead(status, { "content-type": "application/json; charset=utf-8", "content-length": Buffer.byteLength(text), ...headers });
  res.end(text);
}

/** `{timestamp, path, message}` (+ `errors` on validation failures), as the spec says for every error. */
export function sendError(res: ServerResponse, status: number, path: string, message: string, errors?: Issue[], headers: Record<string, string> = {}): void {
  const body: Record<string, unknown> = { timestamp: new Date().toISOString(), path, message };
  if (errors) body.errors = errors;
  sendJson(res, status, body, headers);
}

export const HTML_502 =
  "<html>\r\n<head><title>502 Bad Gateway</title></head>\r\n<body>\r\n<center><h1>502 Bad Gateway</h1></center>\r\n<hr><center>nginx</center>\r\n</body>\r\n</html>\r\n";

/** An error page as a proxy in front of a service sends it: the status, and HTML where JSON was expected. */
export function htmlErrorPage(status: number, message: string): string {
  const escaped = message.replace(/[&<>"]/g, (c) => `&#${c.charCodeAt(0)};`);
  return `<!DOCTYPE html>\r\n<html>\r\n<head><title>${status} ${escaped}</title></head>\r\n<body>\r\n<center><h1>${status} ${escaped}</h1></center>\r\n<hr><center>nginx</center>\r\n</body>\r\n</html>\r\n`;
}

/** Answer an HTML page with this status. */
export function sendHtml(res: ServerResponse, status: number, html: string): void {
  res.writeHead(status, { "content-type": "text/html", "content-length": Buffer.byteLength(html) });
  res.end(html);
}

const MAX_BODY = 5 * 1024 * 1024;

/** Read and parse a JSON body; a malformed one is a 400 with an `errors` entry. */
export async function readJson(req: IncomingMessage): Promise<unknown> {
  const chunks: Buffer[] = [];
  let size = 0;
  for await (const chunk of req) {
    size += (chunk as Buffer).length;
    if (size > MAX_BODY) throw new HttpError(413, "Request body too large");
    chunks.push(chunk as Buffer);
  }
  const text = Buffer.concat(chunks).toString("utf8");
  if (!text.trim()) return undefined;
  try {
    return JSON.parse(text) as unknown;
  } catch {
    throw new HttpError(400, "Validation failed", [{ path: [], message: "Malformed JSON body", code: "invalid_json" }]);
  }
}

/** Zod issues → the wire shape `{path, message, code}`. */
export function zodIssues(issues: readonly { path: readonly PropertyKey[]; message: string; code: string }[]): Issue[] {
  return issues.map((i) => ({ path: i.path.map((p) => (typeof p === "number" ? p : String(p))), message: i.message, code: i.code }));
}

/** Whether a socket address is loopback. */
export function isLoopback(addr: string | undefined): boolean {
  return addr === "127.0.0.1" || addr === "::1" || addr === "::ffff:127.0.0.1" || (addr?.startsWith("127.") ?? false);
}

/**
 * The HTTP front: control routes (loopback only), then faults, then the API. Nothing is logged:
 * the sandbox serves PHI-shaped data and says nothing about it.
 */
import { createServer, type IncomingMessage, type Server, type ServerResponse } from "node:http";
import type { Socket } from "node:net";
import { handleApi, type ApiContext, type ListFaults } from "./api-routes.js";
import { handleControl, type ControlContext } from "./control-routes.js";
import type { FaultInjector } from "./faults.js";
import { HTML_502, HttpError, htmlErrorPage, isLoopback, sendError, sendHtml } from "./http-util.js";
import { CursorError } from "./listing.js";

export interface ServerStats {
  requests: number;
  byStatus: Record<string, number>;
  /**
   * Every write request (any method but GET and HEAD) that reached the API, keyed `METHOD path`,
   * counted on arrival whatever answered it (a fault, a refusal, a lost answer): the sandbox's own
   * record of what was sent to it, so a test can tell "nothing was sent" without the client's word.
   */
  writes: Record<string, number>;
}

export interface SandboxServer {
  server: Server;
  stats: ServerStats;
  /** Destroy hanging requests and open sockets, then close. */
  close(): Promise<void>;
}

function count(stats: ServerStats, key: string): void {
  stats.byStatus[key] = (stats.byStatus[key] ?? 0) + 1;
}

export function createSandboxServer(api: ApiContext, control: ControlContext, faults: FaultInjector): SandboxServer {
  const stats: ServerStats = { requests: 0, byStatus: {}, writes: {} };
  const sockets = new Set<Socket>();
  const timers = new Set<NodeJS.Timeout>();
  const stuckPages = new Map<string, string>();

  const wait = (ms: number) =>
    new Promise<void>((resolve) => {
      const t = setTimeout(() => {
        timers.delete(t);
        resolve();
      }, ms);
      timers.add(t);
    });

  /** Defer the end of `res` (headers and body go out together) until `at` (performance.now() time). */
  const holdUntil = (res: ServerResponse, at: number): void => {
    const end = res.end.bind(res) as (...a: unknown[]) => ServerResponse;
    res.end = ((...args: unknown[]) => {
      const ms = at - performance.now();
      if (ms <= 0) return end(...args);
      void wait(ms).then(() => {
        if (!res.destroyed) end(...args);
      });
      return res;
    }) as ServerResponse["end"];
  };

  /** The write is done as usual; its answer never leaves: the connection is reset instead. */
  const loseAnswer = (req: IncomingMessage, res: ServerResponse): void => {
    count(stats, "lost");
    res.writeHead = (() => res) as unknown as ServerResponse["writeHead"];
    res.end = (() => {
      req.socket.destroy();
      return res;
    }) as ServerResponse["end"];
  };

  const respondError = (res: ServerResponse, path: string, e: unknown): void => {
    if (res.headersSent) {
      res.destroy();
      return;
    }
    if (e instanceof HttpError) sendError(res, e.status, path, e.message, e.errors);
    else if (e instanceof CursorError) sendError(res, 400, path, e.message, [{ path: ["startAfter"], message: e.message, code: "invalid_cursor" }]);
    else sendError(res, 500, path, "Internal server error");
  };

  const handle = async (req: IncomingMessage, res: ServerResponse): Promise<void> => {
    const url = new URL(req.url ?? "/", "http://sandbox.local");
    const path = url.pathname;
    if (path === "/_sandbox" || path.startsWith("/_sandbox/")) {
      if (!isLoopback(req.socket.remoteAddress)) return sendError(res, 403, path, "Control routes answer on loopback only");
      try {
        await handleControl(control, req, res, url);
      } catch (e) {
        respondError(res, path, e);
      }
      return;
    }
    const arrived = performance.now();
    stats.requests++;
    if (req.method !== "GET" && req.method !== "HEAD") {
      const write = `${req.method ?? "?"} ${path}`;
      stats.writes[write] = (stats.writes[write] ?? 0) + 1;
    }
    res.on("finish", () => count(stats, String(res.statusCode)));
    const d = faults.decide(path);
    // A lost answer needs a write to lose: a read it would hit is served as usual.
    if (d.action === "lost" && req.method === "GET") d.action = "none";
    if (d.latencyMs > 0 && d.action !== "none") await wait(d.latencyMs);
    switch (d.action) {
      case "hang":
        count(stats, "hang");
        return; // the socket stays open until the client gives up or close() destroys it
      case "reset":
        count(stats, "reset");
        req.socket.destroy();
        return;
      case "429": {
        const ra = faults.current.retryAfterSeconds;
        return sendError(res, 429, path, "Too many requests", undefined, ra === null ? {} : { "retry-after": String(ra ?? 1) });
      }
      case "400":
      case "403":
      case "500": {
        const status = Number(d.action);
        const message = faults.current.errorMessage ?? (status === 400 ? "Validation failed" : status === 403 ? "Forbidden" : "Internal server error");
        if (faults.current.htmlErrors) return sendHtml(res, status, htmlErrorPage(status, message));
        return sendError(res, status, path, message, status === 403 ? undefined : faults.current.errorIssues);
      }
      case "502":
        return sendHtml(res, 502, HTML_502);
      case "503":
        return sendError(res, 503, path, "Service unavailable");
      default:
        break;
    }
    const lf: ListFaults | undefined = d.listFaults ? { plan: faults.current, stuckPages } : undefined;
    // A served answer leaves `latency` after the request arrived: the sandbox's own work is part of
    // that time, as a real service's is part of its latency, instead of being queued behind it.
    if (d.latencyMs > 0) holdUntil(res, arrived + d.latencyMs);
    if (d.action === "lost") loseAnswer(req, res);
    try {
      await handleApi(api, req, res, url, lf);
    } catch (e) {
      respondError(res, path, e);
    }
  };

  const server = createServer((req, res) => {
    void handle(req, res);
  });
  server.on("connection", (s: Socket) => {
    sockets.add(s);
    s.on("close", () => sockets.delete(s));
  });
  server.keepAliveTimeout = 5_000;

  return {
    server,
    stats,
    close: () =>
      new Promise<void>((resolve) => {
        for (const t of timers) clearTimeout(t);
        timers.clear();
        server.close(() => resolve());
        for (const s of sockets) s.destroy();
        server.closeAllConnections();
      }),
  };
}

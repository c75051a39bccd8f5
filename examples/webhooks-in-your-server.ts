/**
 * Receive webhooks inside your own server: your HTTP server keeps its routes and hands the
 * webhook path to the receiver of `benefits-sync webhooks serve` (the same answers: 2xx only once
 * the event is on disk, 401 for a bad signature, 413, 400, 503), and a worker beside it applies
 * the events to the snapshot, each batch a run of its own (job `webhooks`).
 *
 *   BENEFITS_BASE_URL=https://… BENEFITS_API_KEY=… BENEFITS_DB=snapshot.db \
 *   BENEFITS_WEBHOOK_SECRET=… PORT=8080 node webhooks-in-your-server.js
 *
 * Give the portal http(s)://YOUR-HOST:PORT/webhooks (`webhooks.path` in the configuration). The
 * snapshot must exist (a sync made it): the worker refetches each announced member and applies it
 * through the sync's own path, under the same PII key and the same lease. SIGTERM or Ctrl-C: stops
 * accepting, answers the deliveries in hand, lets the worker finish its batch, exits 0.
 * Exits 2 for bad configuration (no secret, no service, a secret too short).
 */
import { createServer } from "node:http";
import type { AddressInfo } from "node:net";
import { setTimeout as rest } from "node:timers/promises";
import { applyWebhooksOnce, checkReceiverSetup, ConfigError, createReceiver, Inbox, inboxPathFor, loadConfig, ReceiverCounters, SignatureVerifier } from "benefits-sync";

let config: ReturnType<typeof loadConfig>;
let setup: ReturnType<typeof checkReceiverSetup>;
try {
  config = loadConfig({ env: process.env });
  // The checks `webhooks serve` makes before it listens, every problem at once.
  setup = checkReceiverSetup(config, { env: process.env, cwd: process.cwd() });
} catch (e) {
  if (!(e instanceof ConfigError)) throw e;
  for (const problem of e.problems) console.error(problem);
  process.exit(2);
}
const { path } = config.webhooks;

// The inbox: a SQLite file of its own beside the snapshot, so accepting never waits for a sync.
const inbox = Inbox.open(inboxPathFor(config.db));
const receiver = createReceiver({
  path,
  maxBodyBytes: config.webhooks.maxBodyBytes,
  verifier: new SignatureVerifier(setup.secrets),
  auth: setup.auth,
  inbox,
  counters: new ReceiverCounters(setup.secrets.length),
  onStorageError: (e) => console.error(`the inbox could not be written (answered 503, the sender retries): ${String(e)}`),
});

const server = createServer((req, res) => {
  const route = (req.url ?? "/").split("?")[0];
  if (route === path || route === "/healthz") return receiver.handle(req, res);
  // Your own routes.
  res.writeHead(200, { "content-type": "text/plain" }).end("your app\n");
});

// The worker: drain the inbox every second. A drain refetches the due members, then takes the
// snapshot's lease for the apply alone; while a sync holds the lease, the events wait.
const stopping = new AbortController();
async function worker(): Promise<void> {
  let said = "";
  const once = (line: string) => {
    if (line !== said) console.log(line);
    said = line;
  };
  while (!stopping.signal.aborted) {
    try {
      const r = await applyWebhooksOnce(config, { signal: stopping.signal });
      // One drain may apply in several runs (events that arrived while it ran get a batch of their own).
      if (r.runs.length > 0) console.log(`applied: ${r.runs.map((x) => `run ${x.runId} ${x.status} (${x.members} members)`).join(", ")}; ${r.applied} events, ${r.pendingAfter} pending`);
      if (r.busy) once(`waiting: ${r.busy.message}`);
      else if (r.error) once(`apply failed, the events stay pending: ${r.error.message}`);
    } catch (e) {
      once(`apply failed: ${e instanceof ConfigError ? e.problems.join("; ") : String(e)}`);
    }
    await rest(1000, undefined, { signal: stopping.signal }).catch(() => undefined);
  }
}
const working = worker();

server.listen(Number(process.env.PORT ?? 8080), "127.0.0.1", () => {
  const { port } = server.address() as AddressInfo;
  console.log(`listening on http://127.0.0.1:${port} (webhooks: POST ${path})`);
});

async function shutdown(): Promise<void> {
  const closed = new Promise<void>((done) => server.close(() => done()));
  server.closeIdleConnections();
  // Events read but not yet committed are committed now; their senders get their 2xx.
  await receiver.stop();
  await closed;
  stopping.abort();
  await working;
  inbox.close();
  console.log("stopped");
}
for (const signal of ["SIGINT", "SIGTERM"] as const) process.once(signal, () => void shutdown());

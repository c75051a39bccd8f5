/**
 * The receiver for the bench, in its own process: the same `createReceiver` as `webhooks serve`,
 * with the inbox committed on its writer thread as `webhooks serve` does (every 2xx durable) or,
 * for the baseline, an inbox that stores nothing:
 *   node dist/bench/webhook-server.js inbox|none INBOX_PATH SECRET
 * Prints one JSON line {url} once listening; stops on SIGTERM, then prints {commits, accepted, cpuMs}
 * (cpuMs: this process's user and system CPU since it listened).
 */
import { ReceiverCounters } from "../src/webhooks/counters.js";
import { Inbox } from "../src/webhooks/inbox.js";
import { openInboxWriter } from "../src/webhooks/inbox-writer.js";
import { createReceiver, type ReceiverInbox } from "../src/webhooks/server.js";
import { SignatureVerifier } from "../src/webhooks/verify.js";

const [mode, inboxPath, secret] = process.argv.slice(2) as (string | undefined)[];
if ((mode !== "inbox" && mode !== "none") || !inboxPath || !secret) {
  process.stderr.write("usage: webhook-server inbox|none INBOX_PATH SECRET\n");
  process.exit(2);
}
const real = mode === "inbox" ? Inbox.open(inboxPath) : undefined;
const writer = real ? await openInboxWriter(inboxPath) : undefined;
const nothing: ReceiverInbox = { accept: (events) => events.map(() => true), probe: () => undefined };
const durable: ReceiverInbox | undefined = real && writer ? { accept: (events) => writer.accept(events), probe: () => real.probe() } : undefined;
const counters = new ReceiverCounters(1);
const receiver = createReceiver({ path: "/webhooks", maxBodyBytes: 65_536, verifier: new SignatureVerifier([secret]), auth: null, inbox: durable ?? nothing, counters });
const addr = await receiver.listen(0, "127.0.0.1");
const cpuAtStart = process.cpuUsage();
process.stdout.write(`${JSON.stringify({ url: `http://127.0.0.1:${addr.port}/webhooks` })}\n`);
process.once("SIGTERM", () => {
  void receiver.stop().then(async () => {
    await writer?.close();
    real?.close();
    const cpu = process.cpuUsage(cpuAtStart);
    process.stdout.write(`${JSON.stringify({ commits: counters.commits, accepted: counters.accepted, cpuMs: Math.round((cpu.user + cpu.system) / 1000) })}\n`);
  });
});

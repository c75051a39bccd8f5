/**
 * Issue 37: the receiver's worker must not hold the snapshot while it waits on the service. With
 * the member lookup rate-limited (429, Retry-After 3 s), the worker of `webhooks serve` used to
 * claim the snapshot's lease first and then wait out the retries, so a nightly `sync` started
 * meanwhile exited 75 (busy) for as long as the service kept refusing. The worker now refetches
 * before it claims the snapshot: the sync runs, and the events are applied once the service
 * answers again (never with what was fetched before the sync began).
 */
import BetterSqlite3 from "better-sqlite3";
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, expect, it } from "vitest";
import { startSandbox, type Sandbox } from "../../src/sandbox/index.js";
import { startCli, type CliRun } from "../helpers/cli-process.js";
import { TEST_PII_KEY } from "../helpers/temp-store.js";
import { waitUntil } from "../helpers/wait.js";
import { serveWebhooks, stopAll } from "../helpers/webhooks-serve.js";

const SECRET = "whsec-rate-limited-0123456789ab";
let sb: Sandbox | undefined;
const started: CliRun[] = [];
const dir = mkdtempSync(join(tmpdir(), "bs-wh429-"));
afterAll(async () => {
  await stopAll(started);
  await sb?.close();
  rmSync(dir, { recursive: true, force: true });
});

/** The inbox's events by state. */
function inboxStates(path: string): Record<string, number> {
  const db = new BetterSqlite3(path, { readonly: true });
  try {
    const rows = db.prepare("SELECT state, count(*) AS n FROM inbox_events GROUP BY state").all() as { state: string; n: number }[];
    return Object.fromEntries(rows.map((r) => [r.state, r.n]));
  } finally {
    db.close();
  }
}

it("a sync started while the worker waits on a rate-limited member lookup gets the snapshot (not 75), and the events are applied after", async () => {
  sb = await startSandbox({ members: 200, groups: 2, seed: 4129, webhookDelayMs: 20 });
  const db = join(dir, "snap.db");
  const env = { BENEFITS_BASE_URL: sb.baseUrl, BENEFITS_API_KEY: sb.keys.full, BENEFITS_DB: db, BENEFITS_PII_KEY: TEST_PII_KEY.toString(), BENEFITS_WEBHOOK_SECRET: SECRET };
  const first = await startCli(["sync", "--quiet"], env, dir).done;
  expect(first.code, first.stderr).toBe(0);
  const { url } = await serveWebhooks(env, dir, started);

  // Every lookup of one member answers 429 with Retry-After 3; the walks' listings are not touched.
  sb.setFaults({ pathPrefix: "/v1/members/", http429: 1, retryAfterSeconds: 3 });
  sb.webhooks.addConfig({ url, auth: { type: "bearer", token: "unused-by-the-receiver" }, secret: SECRET });
  const day = await sb.advance();
  await sb.webhooks.idle();
  expect(day.changes.members.updated.length + day.changes.members.inserted.length).toBeGreaterThan(0);
  // The worker has asked and been told to wait: it is in its retries now.
  await waitUntil("the worker's member lookup answered 429", () => (sb!.stats().byStatus["429"] ?? 0) > 0, 60_000);

  // The sync gets the snapshot (not 75, "holds this snapshot"). The service rate-limits its own
  // member lookups too, so its outcome is the service's: exit 1 (RATE_LIMITED), recorded as its run.
  const sync = await startCli(["sync", "--quiet"], env, dir).done;
  expect(sync.stderr).not.toContain("holds this snapshot");
  expect(sync.code, `a sync while the worker waited on the service: ${sync.stderr}`).not.toBe(75);
  expect(sync.stderr).toMatch(/^Run 2 (succeeded|failed)/);

  // The service answers again: every event is applied by the worker, none parked.
  sb.setFaults({});
  const inbox = join(dir, "snap.inbox.db");
  await waitUntil("the inbox drained by the worker once the service answers", () => {
    const s = inboxStates(inbox);
    return (s.pending ?? 0) === 0 && (s.applied ?? 0) > 0 ? s : undefined;
  }, 60_000);
  expect(inboxStates(inbox).parked ?? 0).toBe(0);
  const again = await startCli(["sync", "--quiet"], env, dir).done;
  expect(again.code, again.stderr).toBe(0);
  const snap = new BetterSqlite3(db, { readonly: true });
  try {
    const runs = snap.prepare("SELECT job, status FROM runs ORDER BY run_id").all() as { job: string; status: string }[];
    // The first sync, the one the worker let in (its outcome the service's), the last.
    const syncs = runs.filter((r) => r.job === "sync").map((r) => r.status);
    expect([syncs.length, syncs[0], syncs[2]]).toEqual([3, "succeeded", "succeeded"]);
    expect(runs.filter((r) => r.job !== "sync").every((r) => r.job === "webhooks" && r.status === "succeeded")).toBe(true);
  } finally {
    snap.close();
  }
});

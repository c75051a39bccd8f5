/**
 * `webhooks serve` receives and applies: after a first `sync` of the sandbox, a simulated day's
 * events (sent twice, out of order, by the sandbox's own sender) reach the receiver, and its
 * worker alone brings every changed member of the snapshot, coverages included, to the sandbox's
 * state, as recorded runs of job `webhooks`. No `webhooks apply` and no second sync is run.
 */
import BetterSqlite3 from "better-sqlite3";
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { request } from "undici";
import { afterAll, expect, it } from "vitest";
import { startSandbox, type Sandbox } from "../../src/sandbox/index.js";
import { startCli, type CliRun } from "../helpers/cli-process.js";
import { expectedState, snapshotState } from "../helpers/expected.js";
import { parsePrometheusText } from "../helpers/prometheus-parse.js";
import { sandboxData } from "../helpers/sandbox-truth.js";
import { TEST_PII_KEY } from "../helpers/temp-store.js";
import { waitUntil } from "../helpers/wait.js";

const SECRET = "whsec-applies-0123456789abcdef";
let sb: Sandbox | undefined;
let receiver: CliRun | undefined;
const dir = mkdtempSync(join(tmpdir(), "bs-whapply-"));
afterAll(async () => {
  if (receiver?.child.exitCode === null) receiver.child.kill("SIGTERM");
  await receiver?.done;
  await sb?.close();
  rmSync(dir, { recursive: true, force: true });
});

it("a simulated day's events are applied by the receiver's worker: every changed member equals the sandbox's", async () => {
  sb = await startSandbox({ members: 400, groups: 3, seed: 41, webhookDelayMs: 20 });
  const db = join(dir, "snap.db");
  const env = { BENEFITS_BASE_URL: sb.baseUrl, BENEFITS_API_KEY: sb.keys.full, BENEFITS_DB: db, BENEFITS_PII_KEY: TEST_PII_KEY.toString(), BENEFITS_WEBHOOK_SECRET: SECRET };
  const first = await startCli(["sync", "--quiet"], env, dir).done;
  expect(first.code, first.stderr).toBe(0);

  receiver = startCli(["webhooks", "serve", "--port", "0", "--metrics-port", "0"], env, dir);
  let out = "";
  receiver.child.stdout!.on("data", (d: Buffer) => (out += d.toString()));
  const { url, metrics } = await waitUntil("the listening line", () => {
    const line = out.split("\n").find((l) => l.includes('"webhooks.listening"'));
    return line ? (JSON.parse(line) as { url: string; metrics: string }) : undefined;
  });
  const control = async (path: string, body: unknown) => {
    const res = await request(`${sb!.baseUrl}${path}`, { method: "POST", body: JSON.stringify(body), headers: { "content-type": "application/json" } });
    expect(res.statusCode, path).toBeLessThan(300);
    return (await res.body.json()) as { changes: { members: { inserted: string[]; updated: string[]; deleted: string[] } } };
  };
  await control("/_sandbox/webhooks/configs", { url, auth: { type: "bearer", token: "unused-by-the-receiver" }, secret: SECRET, duplicate: true, outOfOrder: true });
  const day = await control("/_sandbox/advance", {});
  await sb.webhooks.idle();
  const changed = [...new Set([...day.changes.members.inserted, ...day.changes.members.updated])];
  expect(changed.length).toBeGreaterThan(0);

  // The worker drains on its own; wait until nothing is pending and a webhooks run succeeded.
  const inboxDb = join(dir, "snap.inbox.db");
  await waitUntil("the inbox drained by the receiver's worker", () => {
    const i = new BetterSqlite3(inboxDb, { readonly: true });
    try {
      const pending = i.prepare("SELECT count(*) FROM inbox_events WHERE state = 'pending'").pluck().get() as number;
      const applied = i.prepare("SELECT count(*) FROM inbox_events WHERE state = 'applied'").pluck().get() as number;
      return pending === 0 && applied > 0 ? true : undefined;
    } finally {
      i.close();
    }
  });
  const snap = new BetterSqlite3(db, { readonly: true });
  try {
    const jobs = snap.prepare("SELECT job, status FROM runs ORDER BY run_id").all() as { job: string; status: string }[];
    expect(jobs[0]).toEqual({ job: "sync", status: "succeeded" });
    expect(jobs.slice(1).length).toBeGreaterThan(0);
    expect(jobs.slice(1).every((j) => j.job === "webhooks" && j.status === "succeeded")).toBe(true);
    const got = snapshotState(snap);
    const want = expectedState(sandboxData(sb), TEST_PII_KEY);
    const pick = (s: typeof got) => ({
      members: changed.map((id) => [id, s.members.get(id) ?? null]),
      coverages: [...s.coverages].filter(([, c]) => changed.includes((c as { memberId: string }).memberId)).sort(([a], [b]) => a.localeCompare(b)),
    });
    expect(pick(got)).toEqual(pick(want));
  } finally {
    snap.close();
  }
  // /metrics: one apply lag per member applied by a run (its events' (member, run) pairs in the inbox).
  const i = new BetterSqlite3(inboxDb, { readonly: true });
  const appliedMembers = i.prepare("SELECT count(*) FROM (SELECT DISTINCT member_id, run_id FROM inbox_events WHERE state = 'applied')").pluck().get() as number;
  const appliedEvents = i.prepare("SELECT count(*) FROM inbox_events WHERE state = 'applied'").pluck().get() as number;
  i.close();
  const scraped = parsePrometheusText(await (await request(metrics)).body.text());
  const one = (name: string) => scraped.find((x) => x.name === name)!.value;
  expect(appliedMembers).toBeGreaterThan(0);
  expect(one("benefits_sync_webhooks_apply_lag_seconds_count")).toBe(appliedMembers);
  expect(one("benefits_sync_webhooks_apply_lag_seconds_sum")).toBeGreaterThan(0);
  expect(one("benefits_sync_webhooks_accepted_total")).toBeGreaterThanOrEqual(appliedEvents);

  receiver.child.kill("SIGTERM");
  const done = await receiver.done;
  expect(done.code).toBe(143);
  expect(done.stdout).toContain('"event":"webhooks.applied"');
  for (const secret of [SECRET, sb.keys.full]) expect(done.stdout + done.stderr).not.toContain(secret);
}); // about 15 s alone

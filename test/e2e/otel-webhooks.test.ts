/**
 * Traces and metrics of `benefits-sync webhooks serve` (the built CLI): a simulated day's events,
 * sent by the sandbox's own sender, are applied by the receiver's worker; each batch it applies is
 * a root span `benefits_sync.webhooks.apply` naming its run, with the refetch of each member as a
 * client span under it; the receiver's counters and the apply lag arrive as metrics under their
 * `/metrics` names; and no SSN, name, member id or key is in any of it. This one exports in OTLP's
 * JSON encoding (OTEL_EXPORTER_OTLP_PROTOCOL=http/json); otel-sync.test.ts covers protobuf.
 */
import BetterSqlite3 from "better-sqlite3";
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { request } from "undici";
import { afterAll, expect, it } from "vitest";
import { startSandbox, type Sandbox } from "../../src/sandbox/index.js";
import { startCli, type CliRun } from "../helpers/cli-process.js";
import { phiFindings, sandboxCanaries, telemetryTexts } from "../helpers/otlp-phi.js";
import { startOtlpReceiver, type OtlpReceiver } from "../helpers/otlp-receiver.js";
import { TEST_PII_KEY } from "../helpers/temp-store.js";
import { waitUntil } from "../helpers/wait.js";
import { serveWebhooks, stopAll } from "../helpers/webhooks-serve.js";

const SECRET = "whsec-otel-0123456789abcdef";
let sb: Sandbox | undefined;
let rx: OtlpReceiver | undefined;
const started: CliRun[] = [];
const dir = mkdtempSync(join(tmpdir(), "bsync-otel-wh-"));
afterAll(async () => {
  await stopAll(started);
  await rx?.close();
  await sb?.close();
  rmSync(dir, { recursive: true, force: true });
});

it("webhooks serve: a span per applied batch with its refetches under it, the receiver's metrics, and no PHI", async () => {
  sb = await startSandbox({ members: 200, groups: 2, seed: 31, webhookDelayMs: 20 });
  rx = await startOtlpReceiver();
  const db = join(dir, "snap.db");
  const env = { BENEFITS_BASE_URL: sb.baseUrl, BENEFITS_API_KEY: sb.keys.full, BENEFITS_DB: db, BENEFITS_PII_KEY: TEST_PII_KEY.toString(), BENEFITS_WEBHOOK_SECRET: SECRET };
  const before = sandboxCanaries(sb, [sb.keys.full, SECRET, TEST_PII_KEY.toString()]);
  const first = await startCli(["sync", "--quiet"], env, dir).done;
  expect(first.code, first.stderr).toBe(0);

  const { run: receiver, url } = await serveWebhooks({ ...env, OTEL_EXPORTER_OTLP_ENDPOINT: rx.url, OTEL_EXPORTER_OTLP_PROTOCOL: "http/json" }, dir, started);
  const control = async (path: string, body: unknown) => {
    const res = await request(`${sb!.baseUrl}${path}`, { method: "POST", body: JSON.stringify(body), headers: { "content-type": "application/json" } });
    expect(res.statusCode, path).toBeLessThan(300);
    return (await res.body.json()) as { changes: { members: { inserted: string[]; updated: string[] } } };
  };
  await control("/_sandbox/webhooks/configs", { url, auth: { type: "bearer", token: "unused-by-the-receiver" }, secret: SECRET, duplicate: true });
  const day = await control("/_sandbox/advance", {});
  await sb.webhooks.idle();
  expect(day.changes.members.inserted.length + day.changes.members.updated.length).toBeGreaterThan(0);
  const inbox = (sql: string) => {
    const i = new BetterSqlite3(join(dir, "snap.inbox.db"), { readonly: true });
    try {
      return i.prepare(sql).pluck().get() as number;
    } finally {
      i.close();
    }
  };
  await waitUntil("the inbox drained by the receiver's worker", () =>
    inbox("SELECT count(*) FROM inbox_events WHERE state = 'pending'") === 0 && inbox("SELECT count(*) FROM inbox_events WHERE state = 'applied'") > 0 ? true : undefined,
  );
  receiver.child.kill("SIGTERM");
  const done = await receiver.done;
  expect(done.code, done.stderr).toBe(143);
  expect(done.stderr).not.toContain("telemetry");
  expect(rx.requests.length).toBeGreaterThan(0);
  expect(rx.requests.every((q) => q.contentType.startsWith("application/json"))).toBe(true);

  // One root span per batch the worker applied, naming the run it recorded.
  const snap = new BetterSqlite3(db, { readonly: true });
  const webhookRuns = snap.prepare("SELECT run_id FROM runs WHERE job = 'webhooks' AND status = 'succeeded' ORDER BY run_id").pluck().all() as number[];
  snap.close();
  expect(webhookRuns.length).toBeGreaterThan(0);
  const applies = rx.spans.filter((s) => s.name === "benefits_sync.webhooks.apply");
  expect(applies.every((s) => s.parentSpanId === "")).toBe(true);
  expect(applies.map((s) => s.attributes["benefits_sync.run.id"]).sort((a, b) => Number(a) - Number(b))).toEqual(webhookRuns);
  expect(applies.every((s) => s.attributes["benefits_sync.run.status"] === "succeeded" && s.status.code !== 2)).toBe(true);
  // Under each, one refetch per member it applied: client spans in its trace whose parent it is.
  for (const a of applies) {
    const refetches = rx.spans.filter((s) => s.parentSpanId === a.spanId);
    expect(refetches.length).toBe(a.attributes["benefits_sync.webhooks.members"]);
    // 404: a member deleted that day (kept until a full walk proves it gone).
    for (const r of refetches) expect([r.traceId, r.kind, r.name, [200, 404].includes(r.attributes["http.response.status_code"] as number)]).toEqual([a.traceId, 3, "GET /v1/members/{id}", true]);
  }
  const members = applies.reduce((n, a) => n + Number(a.attributes["benefits_sync.webhooks.members"]), 0);
  expect(members).toBe(inbox("SELECT count(*) FROM (SELECT DISTINCT member_id, run_id FROM inbox_events WHERE state = 'applied')"));
  expect(applies.reduce((n, a) => n + Number(a.attributes["benefits_sync.webhooks.events_applied"]), 0)).toBe(inbox("SELECT count(*) FROM inbox_events WHERE state = 'applied'"));

  // The receiver's metrics, as the last export before exit saw them (cumulative).
  const last = (name: string) => rx!.metrics.filter((m) => m.name === name).pop();
  const value = (name: string) => last(name)?.points.reduce((n, p) => n + p.value, 0);
  expect(value("benefits_sync_webhooks_received_total")).toBeGreaterThan(0);
  expect(value("benefits_sync_webhooks_accepted_total")).toBe(inbox("SELECT count(*) FROM inbox_events"));
  expect(value("benefits_sync_webhooks_duplicates_total")).toBeGreaterThan(0);
  expect(last("benefits_sync_webhooks_rejected_total")?.points.map((p) => p.attributes.reason).sort()).toEqual(
    ["bad_request", "bad_signature", "method_not_allowed", "missing_signature", "not_found", "too_large", "unauthorized", "unavailable"],
  );
  expect(last("benefits_sync_webhooks_apply_lag_seconds")).toMatchObject({ type: "histogram", unit: "s", points: [{ value: members }] });
  expect(last("benefits_sync_webhooks_request_duration_seconds")?.points.some((p) => p.attributes.endpoint === "webhook" && p.attributes.status === "200")).toBe(true);

  const canaries = sandboxCanaries(sb, [], before);
  expect(phiFindings(telemetryTexts(rx), rx.requests.map((q) => q.body), canaries)).toEqual([]);
}); // about 10 s alone

/**
 * `benefits-sync webhooks serve --metrics-port`: `GET /metrics` on a listener of its own, scraped
 * and parsed during a burst of deliveries (good, repeated, badly signed): the counters agree with
 * what was sent, the latency histograms count every request and commit, every label holds a fixed
 * word (no member or event id), and without the flag nothing listens for metrics.
 */
import { createHmac } from "node:crypto";
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { request } from "undici";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { startCli, type CliRun } from "../helpers/cli-process.js";
import { closedPort } from "../helpers/ports.js";
import { parsePrometheusText, type Sample } from "../helpers/prometheus-parse.js";
import { waitUntil } from "../helpers/wait.js";

const SECRET = "whsec-metrics-0123456789abcdef";
let SERVICE: Record<string, string>;
let dir: string;
beforeAll(async () => {
  dir = mkdtempSync(join(tmpdir(), "bs-whmetrics-"));
  SERVICE = { BENEFITS_BASE_URL: `http://127.0.0.1:${await closedPort()}`, BENEFITS_API_KEY: "e2e-unused-api-key" };
});
afterAll(() => rmSync(dir, { recursive: true, force: true }));

const sign = (body: string) => createHmac("sha256", SECRET).update(body).digest("hex");

async function serve(db: string, args: string[]): Promise<{ run: CliRun; listening: { url: string; metrics?: string } }> {
  const run = startCli(["webhooks", "serve", "--port", "0", ...args], { ...SERVICE, BENEFITS_DB: join(dir, db), BENEFITS_WEBHOOK_SECRET: SECRET }, dir);
  let out = "";
  run.child.stdout!.on("data", (d: Buffer) => (out += d.toString()));
  const listening = await waitUntil("the listening line", () => {
    const line = out.split("\n").find((l) => l.includes('"webhooks.listening"'));
    return line ? (JSON.parse(line) as { url: string; metrics?: string }) : run.child.exitCode !== null ? Promise.reject(new Error(`exited ${run.child.exitCode}`)) : undefined;
  });
  return { run, listening };
}

async function post(url: string, body: string, signature: string): Promise<number> {
  const res = await request(url, { method: "POST", body, headers: { "content-type": "application/json", "x-service-signature": signature } });
  await res.body.dump();
  return res.statusCode;
}

const value = (samples: Sample[], name: string, labels: Record<string, string> = {}) =>
  samples.filter((s) => s.name === name && Object.entries(labels).every(([k, v]) => s.labels[k] === v)).reduce((n, s) => n + s.value, 0);

describe("webhooks serve --metrics-port: GET /metrics", () => {
  it("scraped during a burst: counters as sent, every request and commit timed, labels of fixed words only", async () => {
    const s = await serve("metrics.db", ["--metrics-port", "0"]);
    try {
      const metricsUrl = s.listening.metrics!;
      expect(metricsUrl).toMatch(/^http:\/\/127\.0\.0\.1:\d+\/metrics$/);
      // Not on the webhook port, which faces the service.
      expect(new URL(metricsUrl).port).not.toBe(new URL(s.listening.url).port);
      const events = Array.from({ length: 40 }, (_, i) => JSON.stringify({ id: `evt_${i}`, type: "member_update", payload: { id: `mbr-secret-${i}` } }));
      // The burst, scraped while it runs: a scrape in the middle parses too.
      const burst = Promise.all([
        ...events.map((b) => post(s.listening.url, b, sign(b))),
        ...events.slice(0, 5).map((b) => post(s.listening.url, b, sign(b))),
        ...events.slice(0, 3).map((b) => post(s.listening.url, b, "0".repeat(64))),
      ]);
      const during = await request(metricsUrl);
      expect(during.statusCode).toBe(200);
      parsePrometheusText(await during.body.text());
      const statuses = await burst;
      expect(statuses.filter((x) => x === 200)).toHaveLength(45);
      expect(statuses.filter((x) => x === 401)).toHaveLength(3);

      const res = await request(metricsUrl);
      expect(res.statusCode).toBe(200);
      expect(res.headers["content-type"]).toMatch(/^text\/plain; version=0\.0\.4/);
      const text = await res.body.text();
      const samples = parsePrometheusText(text);
      expect(value(samples, "benefits_sync_webhooks_received_total")).toBe(48);
      // Repeats of an event are answered 2xx and stored once.
      expect(value(samples, "benefits_sync_webhooks_accepted_total")).toBe(40);
      expect(value(samples, "benefits_sync_webhooks_duplicates_total")).toBe(5);
      expect(value(samples, "benefits_sync_webhooks_rejected_total", { reason: "bad_signature" })).toBe(3);
      expect(value(samples, "benefits_sync_webhooks_secret_matched_total", { secret: "0" })).toBe(45);
      expect(value(samples, "benefits_sync_webhooks_inbox_commits_total")).toBeGreaterThan(0);
      // Every request is in the latency histogram, by endpoint and status; every event handed to the inbox in its own.
      expect(value(samples, "benefits_sync_webhooks_request_duration_seconds_count", { endpoint: "webhook", status: "200" })).toBe(45);
      expect(value(samples, "benefits_sync_webhooks_request_duration_seconds_count", { endpoint: "webhook", status: "401" })).toBe(3);
      expect(value(samples, "benefits_sync_webhooks_request_duration_seconds_bucket", { endpoint: "webhook", status: "200", le: "+Inf" })).toBe(45);
      expect(value(samples, "benefits_sync_webhooks_request_duration_seconds_sum", { endpoint: "webhook", status: "200" })).toBeGreaterThan(0);
      expect(value(samples, "benefits_sync_webhooks_inbox_accept_duration_seconds_count")).toBe(45);
      // No label holds an id of a person or an event: only fixed words and numbers.
      const labelValues = new Set(samples.flatMap((x) => Object.values(x.labels)));
      for (const v of labelValues) expect(v).toMatch(/^(webhook|healthz|other|\d+|\+Inf|\d*\.?\d+(e[-+]?\d+)?|[a-z_]+)$/);
      expect(text).not.toMatch(/mbr-secret|evt_\d/);
      // GET only, at /metrics only.
      const wrongMethod = await request(metricsUrl, { method: "POST", body: "" });
      expect(wrongMethod.statusCode).toBe(405);
      await wrongMethod.body.dump();
      const wrongPath = await request(metricsUrl.replace(/\/metrics$/, "/webhooks"));
      expect(wrongPath.statusCode).toBe(404);
      await wrongPath.body.dump();
    } finally {
      s.run.child.kill("SIGTERM");
    }
    expect((await s.run.done).code).toBe(143);
  });

  it("off unless asked for: no metrics listener, and --help says how to turn it on", async () => {
    const s = await serve("off.db", []);
    try {
      expect(s.listening.metrics).toBeUndefined();
    } finally {
      s.run.child.kill("SIGTERM");
    }
    expect((await s.run.done).code).toBe(143);
    const help = await startCli(["webhooks", "serve", "--help"], {}, dir).done;
    expect(help.stdout).toMatch(/--metrics-port <n>/);
    expect(help.stdout).toMatch(/--metrics-host <host>/);
  });
});

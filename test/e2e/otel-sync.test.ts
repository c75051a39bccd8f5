/**
 * Traces and metrics of a real `benefits-sync sync` (the built CLI, against the sandbox over
 * loopback) reach a loopback OTLP/HTTP receiver (test/helpers/otlp-receiver.ts), which decodes the
 * protobuf bodies with the protocol's own .proto files: one root span per run, a walk per scope
 * under it, each request to the service under its walk, the delivery under the run, the run
 * counter and histogram; and no SSN, name, member id or key anywhere in what was sent. Without the
 * OTEL_* variables nothing is sent and none of the SDK is loaded; with a collector that is down the
 * sync succeeds, a bounded delay later, with one warning line.
 */
import { spawn } from "node:child_process";
import { existsSync, mkdtempSync, readFileSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { ROUTE_TEMPLATES } from "../../src/api/endpoints.js";
import { startSandbox, type Sandbox } from "../../src/sandbox/index.js";
import { startCli } from "../helpers/cli-process.js";
import { phiFindings, sandboxCanaries, telemetryTexts, type Canaries } from "../helpers/otlp-phi.js";
import { startOtlpReceiver, type OtlpReceiver, type ReceivedSpan } from "../helpers/otlp-receiver.js";
import { closedPort } from "../helpers/ports.js";
import { installedEnv, swapPort } from "../helpers/printed-commands.js";
import { docPage, namedBlock } from "../helpers/readme-blocks.js";
import { sandboxData } from "../helpers/sandbox-truth.js";
import { TEST_PII_KEY } from "../helpers/temp-store.js";

let sb: Sandbox;
let rx: OtlpReceiver;
let dir: string;
let canaries: Canaries;
const COLLECTOR_KEY = "otel-collector-key-5e1f";
const PRELOAD = new URL("../helpers/module-log.mjs", import.meta.url);
/** Modules of the SDK proper: the API (a no-op alone) is not one of them. */
const SDK_MODULE = /@opentelemetry\/(sdk-|exporter-|otlp-|resources|context-async-hooks|core)/;

beforeAll(async () => {
  sb = await startSandbox({ members: 150, groups: 3, seed: 23 });
  rx = await startOtlpReceiver();
  canaries = sandboxCanaries(sb, [sb.keys.full, TEST_PII_KEY.toString(), COLLECTOR_KEY]);
  dir = mkdtempSync(join(tmpdir(), "bsync-otel-"));
});
afterAll(async () => {
  await rx?.close();
  await sb?.close();
  rmSync(dir, { recursive: true, force: true });
});

const env = (extra: Record<string, string> = {}) => ({
  BENEFITS_BASE_URL: sb.baseUrl,
  BENEFITS_API_KEY: sb.keys.full,
  BENEFITS_DB: join(dir, "snap.db"),
  BENEFITS_PII_KEY: TEST_PII_KEY.toString(),
  ...extra,
});
/** `sync` as cron runs it, every module it loads listed in `log`. */
const sync = (args: string[], extra: Record<string, string>, log: string) =>
  startCli(["sync", "--claims-since", "1900-01-01", "--claims-until", "2999-12-31", ...args], env({ ...extra, MODULE_LOG: log, NODE_OPTIONS: `--import=${PRELOAD.href}` }), dir).done;
const loaded = (log: string) => (existsSync(log) ? readFileSync(log, "utf8").split("\n") : []);

describe("OpenTelemetry of a sync", () => {
  it("is off without the OTEL_* variables: nothing is sent, and nothing of the SDK is loaded", async () => {
    const log = join(dir, "modules-off.log");
    const r = await sync(["--quiet"], {}, log);
    expect(r.code, r.stderr).toBe(0);
    expect(rx.requests).toHaveLength(0);
    const modules = loaded(log);
    // The log is real: the CLI's own modules and the OpenTelemetry API are in it.
    expect(modules.some((m) => m.endsWith("/dist/src/pipeline/sync.js"))).toBe(true);
    expect(modules.some((m) => m.includes("@opentelemetry/api/"))).toBe(true);
    expect(modules.filter((m) => SDK_MODULE.test(m))).toEqual([]);
  });

  let runId = 0;
  let spans: ReceivedSpan[] = [];
  let deleted: string[] = [];
  it("sends the run's spans with their parent links: run > walks > requests, run > delivery; and the run's metrics", async () => {
    const day = await sb.advance();
    canaries = sandboxCanaries(sb, [], canaries);
    deleted = day.changes.members.deleted;
    expect(day.changes.members.deleted.length, "the day deletes members: the sync looks each up").toBeGreaterThan(0);
    const log = join(dir, "modules-on.log");
    const r = await sync(["--json", "--out", join(dir, "out")], { OTEL_EXPORTER_OTLP_ENDPOINT: rx.url, OTEL_EXPORTER_OTLP_HEADERS: `x-collector-key=${COLLECTOR_KEY}` }, log);
    expect(r.code, r.stderr).toBe(0);
    expect(r.stderr).not.toContain("telemetry");
    // Each export carries the headers OTEL_EXPORTER_OTLP_HEADERS sets (a vendor's key), and prints them nowhere.
    expect(rx.requests.length).toBeGreaterThan(0);
    expect(rx.requests.every((q) => q.headers["x-collector-key"] === COLLECTOR_KEY)).toBe(true);
    expect(r.stdout + r.stderr).not.toContain(COLLECTOR_KEY);
    expect(loaded(log).some((m) => /@opentelemetry\/sdk-trace/.test(m))).toBe(true);
    const report = JSON.parse(r.stdout.trim().split("\n").pop()!) as { runId: number; status: string; durationMs: number };
    runId = report.runId;
    expect(runId).toBe(2);
    expect(rx.requests.every((q) => q.contentType === "application/x-protobuf")).toBe(true);

    const root = rx.spans.filter((s) => s.parentSpanId === "" && s.attributes["benefits_sync.run.id"] === runId);
    expect(root.map((s) => [s.name, s.attributes["benefits_sync.job"], s.attributes["benefits_sync.run.status"], s.kind])).toEqual([["benefits_sync.run", "sync", "succeeded", 1]]);
    spans = rx.spans.filter((s) => s.traceId === root[0]!.traceId);
    const byId = new Map(spans.map((s) => [s.spanId, s]));
    expect(byId.size).toBe(spans.length);
    // Every span but the root has its parent in the same trace.
    expect(spans.filter((s) => s !== root[0] && !byId.has(s.parentSpanId)).map((s) => s.name)).toEqual([]);
    expect(rx.spans.filter((s) => s.parentSpanId === "" && s.name === "benefits_sync.run")).toHaveLength(1);

    const walks = spans.filter((s) => s.name === "benefits_sync.walk");
    expect(walks.every((w) => w.parentSpanId === root[0]!.spanId)).toBe(true);
    const listings = walks.filter((w) => w.attributes["benefits_sync.walk.lookup"] === false);
    const groups = sandboxData(sb).groups.map((g) => String(g.groupId)).sort();
    const walked = (resource: string) => listings.filter((w) => w.attributes["benefits_sync.resource"] === resource);
    expect(walked("designs")).toHaveLength(1);
    expect(walked("groups")).toHaveLength(1);
    for (const r of ["members", "claims"]) expect(walked(r).map((w) => w.attributes["benefits_sync.group.id"]).sort(), r).toEqual(groups);
    const records = (r: string) => walked(r).reduce((n, w) => n + Number(w.attributes["benefits_sync.walk.records"]), 0);
    expect(records("members")).toBeGreaterThan(100);

    // Each request to the service is a client span whose parent is a walk, named by its template.
    const requests = spans.filter((s) => s.kind === 3);
    expect(requests.length).toBeGreaterThan(walks.length);
    expect(requests.filter((s) => byId.get(s.parentSpanId)?.name !== "benefits_sync.walk").map((s) => s.name)).toEqual([]);
    for (const s of requests) {
      expect(ROUTE_TEMPLATES).toContain(s.attributes["url.template"]);
      expect(s.name).toBe(`GET ${String(s.attributes["url.template"])}`);
      expect(s.attributes["http.response.status_code"]).toBeTypeOf("number");
    }
    const under = (w: ReceivedSpan) => requests.filter((s) => s.parentSpanId === w.spanId).map((s) => s.attributes["url.template"]);
    for (const w of walked("members")) expect(new Set(under(w))).toEqual(new Set(["/v2/members"]));
    for (const w of walked("claims")) expect(new Set(under(w))).toEqual(new Set(["/v1/claims/medical"]));
    // The deleted members were looked up, one by one: walks of their own, no id on them.
    const lookups = walks.filter((w) => w.attributes["benefits_sync.walk.lookup"] === true && under(w).includes("/v1/members/{id}"));
    expect(lookups.length).toBeGreaterThanOrEqual(day.changes.members.deleted.length);

    const deliveries = spans.filter((s) => s.name === "benefits_sync.deliver");
    expect(deliveries.map((d) => [d.parentSpanId === root[0]!.spanId, d.attributes])).toEqual([
      [true, { "benefits_sync.output.kind": "folder", "benefits_sync.run.id": runId, "benefits_sync.output.format": "csv", "benefits_sync.output.status": "delivered", "benefits_sync.output.runs": 2 }],
    ]);
    expect(root[0]!.resource).toMatchObject({ "service.name": "benefits-sync", "service.version": expect.any(String) });

    const metric = (name: string) => rx.metrics.filter((m) => m.name === name).flatMap((m) => m.points);
    expect(metric("benefits_sync_job_runs_total")).toEqual([{ attributes: { job: "sync", outcome: "succeeded" }, value: 1 }]);
    const [duration] = metric("benefits_sync_job_run_duration_seconds");
    expect(duration).toMatchObject({ attributes: { job: "sync" }, value: 1, bounds: [1, 5, 15, 30, 60, 120, 300, 600, 1200, 1800, 3600, 7200] });
    expect(duration!.sum).toBeCloseTo(report.durationMs / 1000, 6);
    expect(rx.metrics.find((m) => m.name === "benefits_sync_job_run_duration_seconds")?.unit).toBe("s");
  });

  it("carries no SSN, name, member id, email or key in any span, event, status, resource or metric (scanned)", () => {
    expect(spans.length).toBeGreaterThan(20);
    const texts = telemetryTexts(rx);
    const bodies = rx.requests.map((q) => q.body);
    expect(texts.length).toBeGreaterThan(200);
    // The scan finds what it is meant to, in the texts and in the bytes.
    const m = sandboxData(sb).members[0]!;
    const planted: [string, string][] = [["planted", `x ${String(m.ssn)} ${String(m.lastName)}`]];
    // A member the day deleted (the one a lookup asks for) is a canary too.
    expect(phiFindings(planted, [Buffer.from(`..${String(m.id)}..${deleted[0]!}`)], canaries)).toHaveLength(4);
    expect(phiFindings(texts, bodies, canaries)).toEqual([]);
  });

  it("runs docs/metrics.md's recipe as printed (its collector's port swapped for the receiver's): the service's name is the one it sets", async () => {
    const { lines, says } = swapPort(namedBlock(docPage("metrics.md"), "otel: a sync sending its traces and metrics to a collector"), 4318, Number(new URL(rx.url).port));
    expect(lines).toHaveLength(1);
    const child = spawn("sh", ["-c", lines[0]!], { cwd: dir, env: { ...env(), ...installedEnv(dir) }, stdio: ["ignore", "pipe", "pipe"] });
    let err = "";
    child.stderr.on("data", (d: Buffer) => (err += d.toString()));
    const code = await new Promise<number | null>((resolve) => child.once("close", resolve));
    expect(code, `${says}: ${err}`).toBe(0);
    const roots = rx.spans.filter((s) => s.name === "benefits_sync.run" && s.resource["service.name"] === "benefits-sync-nightly");
    expect(roots.map((s) => [s.attributes["benefits_sync.run.status"], s.parentSpanId])).toEqual([["succeeded", ""]]);
  });

  it("with a collector that is down: the sync succeeds, one warning line naming the endpoint's origin, a bounded delay", async () => {
    const quietRun = () => sync(["--quiet"], {}, join(dir, "modules-baseline.log"));
    const t0 = performance.now();
    expect((await quietRun()).code).toBe(0);
    const baseline = performance.now() - t0;
    const port = await closedPort();
    const t1 = performance.now();
    const r = await sync(["--quiet"], { OTEL_EXPORTER_OTLP_ENDPOINT: `http://127.0.0.1:${port}/some/path` }, join(dir, "modules-down.log"));
    const took = performance.now() - t1;
    expect(r.code, r.stderr).toBe(0);
    const lines = r.stderr.trim().split("\n");
    expect(lines).toHaveLength(1);
    expect(lines[0]).toMatch(new RegExp(`^benefits-sync: telemetry: .*http://127\\.0\\.0\\.1:${port} \\((ECONNREFUSED|Error)\\)`));
    expect(lines[0]).not.toContain("/some/path");
    // The export's deadline (3 s by default, retries included) and the wait for it at exit bound
    // the delay; the exporter's own default (10 s) would retry for 6.5 s at least.
    expect(took - baseline).toBeLessThan(5_000);
  });
});

/**
 * `benefits-sync doctor` through `main()` against a scripted `node:http` server on port 0 (the
 * sandbox was not ready when this was written; see doctor-sandbox.test.ts for the real one).
 */
import { createServer, type Server } from "node:http";
import type { AddressInfo } from "node:net";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { ExitCode } from "../../../src/cli/exit-codes.js";
import { FORBIDDEN_ADVICE } from "../../../src/cli/doctor/checks.js";
import { runCli } from "./run-cli.js";

const KEYS = { full: "stub-full-key-4f1d2", noClaims: "stub-noclaims-key-77a", bad: "stub-bad-key-0000" };
// Data the doctor must never print.
const MEMBER = { id: "mem-3b9d-secret-id", firstName: "Zoë", lastName: "Nguyễn", ssn: "123-45-6789" };

let server: Server;
let baseUrl: string;
const seen: { path: string; query: URLSearchParams }[] = [];

beforeAll(async () => {
  server = createServer((req, res) => {
    const url = new URL(req.url ?? "/", "http://x");
    seen.push({ path: url.pathname, query: url.searchParams });
    const send = (status: number, body: unknown) => {
      res.writeHead(status, { "content-type": "application/json" }).end(JSON.stringify(body));
    };
    const error = (status: number, message: string) =>
      send(status, { timestamp: new Date().toISOString(), path: url.pathname, message });
    const auth = req.headers.authorization ?? "";
    if (auth !== `Bearer ${KEYS.full}` && auth !== `Bearer ${KEYS.noClaims}`) return error(401, "Unauthorized");
    if (url.pathname === "/v1/claims/medical" && auth === `Bearer ${KEYS.noClaims}`) return error(403, "Forbidden");
    switch (url.pathname) {
      case "/v2/designs":
      case "/v2/groups":
      case "/v1/claims/medical":
        return send(200, { data: [] });
      case "/v2/members":
        return send(200, { data: [MEMBER] });
      case `/v1/members/${MEMBER.id}`:
        return send(200, MEMBER);
      default:
        return error(404, `No such thing at ${url.pathname}`);
    }
  });
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  baseUrl = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
});
afterAll(() => new Promise<void>((resolve) => server.close(() => resolve())));

const doctor = (key: string, extra: string[] = []) =>
  runCli(["doctor", "--base-url", baseUrl, ...extra], { env: { BENEFITS_API_KEY: key }, cwd: "/nonexistent-cwd" });

function expectNoData(text: string) {
  for (const s of [MEMBER.id, MEMBER.firstName, MEMBER.lastName, MEMBER.ssn, ...Object.values(KEYS)]) expect(text).not.toContain(s);
}

describe("benefits-sync doctor (stub server)", () => {
  it("with a working key: every check ok, exit 0, no data printed", async () => {
    seen.length = 0;
    const r = await doctor(KEYS.full);
    expect(r.stderr).toBe("");
    expect(r.code).toBe(ExitCode.OK);
    const lines = r.stdout.split("\n");
    for (const endpoint of ["GET /v2/designs", "GET /v2/groups", "GET /v2/members", "GET /v1/claims/medical", "GET /v1/members/{memberId}", "GET /v1/enrollmentRequests/{id}"]) {
      expect(lines.find((l) => l.startsWith(endpoint))).toMatch(/\s+ok\s+/);
    }
    expect(r.stdout).toContain("reachable: 404 for a made-up id");
    expect(r.stdout).toContain("All 6 checks passed.");
    expectNoData(r.stdout);
    // one call per endpoint; the claims call asks for a one-day range
    expect(seen.map((s) => s.path)).toHaveLength(6);
    const claims = seen.find((s) => s.path === "/v1/claims/medical")!;
    expect(claims.query.get("serviceDateFrom")).toMatch(/^\d{4}-\d{2}-\d{2}$/);
    expect(claims.query.get("serviceDateTo")).toBe(claims.query.get("serviceDateFrom"));
  });

  it("without claims permission: claims forbidden with the operator advice, exit 1", async () => {
    const r = await doctor(KEYS.noClaims);
    expect(r.code).toBe(ExitCode.RUN_FAILED);
    const claims = r.stdout.split("\n").find((l) => l.startsWith("GET /v1/claims/medical"));
    expect(claims).toMatch(/\s+forbidden\s+403 in \d+ ms: /);
    expect(claims).toContain(FORBIDDEN_ADVICE);
    expect(r.stdout.split("\n").filter((l) => /\s+ok\s+/.test(l))).toHaveLength(5);
    expect(r.stdout).toContain("1 of 6 checks did not pass.");
    expectNoData(r.stdout);
  });

  it("with a bad key: auth failed on the first call, stops early, exit 1", async () => {
    seen.length = 0;
    const r = await doctor(KEYS.bad);
    expect(r.code).toBe(ExitCode.RUN_FAILED);
    expect(r.stdout).toMatch(/GET \/v2\/designs\s+auth failed\s+401 in \d+ ms: the key was refused/);
    expect(r.stdout).toContain("Stopped: the first call was refused (401)");
    expect(seen).toHaveLength(1); // a 401 is not retried and nothing else is tried
    expectNoData(r.stdout + r.stderr);
  });

  it("--json prints the table as one JSON object", async () => {
    const r = await doctor(KEYS.noClaims, ["--json"]);
    expect(r.code).toBe(ExitCode.RUN_FAILED);
    expect(r.stdout.trim().split("\n")).toHaveLength(1);
    const out = JSON.parse(r.stdout) as { ok: boolean; service: string; checks: { endpoint: string; result: string; status?: number }[] };
    expect(out.ok).toBe(false);
    expect(out.service).toBe(baseUrl);
    expect(out.checks.map((c) => c.result)).toEqual(["ok", "ok", "ok", "forbidden", "ok", "ok"]);
    expect(out.checks[3]).toMatchObject({ endpoint: "GET /v1/claims/medical", status: 403 });
    expectNoData(r.stdout);
  });

  it("an unreachable service: every check failed with the transport code, exit 1", async () => {
    const closed = createServer();
    await new Promise<void>((resolve) => closed.listen(0, "127.0.0.1", resolve));
    const port = (closed.address() as AddressInfo).port;
    await new Promise<void>((resolve) => closed.close(() => resolve()));
    const r = await runCli(["doctor", "--base-url", `http://127.0.0.1:${port}`, "--json"], {
      env: { BENEFITS_API_KEY: KEYS.full },
      cwd: "/nonexistent-cwd",
    });
    expect(r.code).toBe(ExitCode.RUN_FAILED);
    const out = JSON.parse(r.stdout) as { checks: { result: string; detail: string }[] };
    expect(out.checks[0]).toMatchObject({ result: "failed" });
    expect(out.checks[0]!.detail).toContain("ECONNREFUSED");
    expect(out.checks.find((c) => c.result === "skipped")).toBeDefined(); // no member list, no member fetch
  });
});

import { createServer, request, type Server } from "node:http";
import type { AddressInfo } from "node:net";
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { startSandbox, type MemberRec, type Sandbox } from "../../src/sandbox/index.js";
import { startCli } from "../helpers/cli-process.js";
import { waitUntil } from "../helpers/wait.js";

/**
 * What census apply refuses or reports: production without --yes, the embedded sandbox, a request
 * the service rejects (its message and the portal advice), an enrollment request that fails.
 */
let sb: Sandbox;
let dir: string;

beforeAll(async () => {
  sb = await startSandbox({ members: 60, groups: 2, seed: 41, enrollmentDelayMs: 30 });
  dir = mkdtempSync(join(tmpdir(), "bsync-census-guards-"));
});
afterAll(async () => {
  await sb?.close();
  rmSync(dir, { recursive: true, force: true });
});

const group = () => [...sb.iterate("groups")].at(-1)!;
function census(name: string, first: string, ssn: string): string {
  const file = join(dir, `${name}.csv`);
  writeFileSync(file, `employee_id,relationship,first_name,last_name,date_of_birth,ssn,plan_id\nE1,self,${first},Guard,1988-08-08,${ssn},${group().plans[0]!.id}\n`);
  return file;
}
const named = (first: string) => ([...sb.iterate("members")] as MemberRec[]).filter((m) => m.firstName === first && m.lastName === "Guard");
const run = (args: string[], env: Record<string, string> = { BENEFITS_BASE_URL: sb.baseUrl }) =>
  startCli(args, { BENEFITS_API_KEY: sb.keys.full, BENEFITS_DB: join(dir, "snap.db"), ...env }, dir).done;

describe("census apply's guards and failures", () => {
  it("asks for --yes against the production environment, and sends nothing without it", async () => {
    writeFileSync(join(dir, "benefits-sync.config.json"), JSON.stringify({ environment: "production", environments: { production: sb.baseUrl } }));
    const file = census("prod", "Prod", "902-30-0001");
    const before = sb.stats().requests;
    const no = await run(["census", "apply", file, "--group", group().id], {});
    expect(no.code).toBe(2);
    expect(no.stderr).toContain("production environment");
    expect(no.stderr).toContain("--yes");
    expect(sb.stats().requests).toBe(before);
    const yes = await run(["census", "apply", file, "--group", group().id, "--yes"], {});
    expect(yes.code, yes.stderr).toBe(0);
    expect(named("Prod")).toHaveLength(1);
    rmSync(join(dir, "benefits-sync.config.json"));
  });

  it("plans against a snapshot kept with --pii keep (plain SSNs there) by the same tokens", async () => {
    const db = join(dir, "keep.db");
    const env = { BENEFITS_BASE_URL: sb.baseUrl, BENEFITS_DB: db };
    expect((await run(["sync", "--pii", "keep"], env)).code).toBe(0);
    const gp = group().id;
    const m = ([...sb.iterate("members")] as MemberRec[]).find((x) => x.relationship === "self" && /^\d{3}-\d{2}-\d{4}$/.test(x.ssn) && x.coverages.some((c) => c.groupPolicyId === gp && c.endDate === null))!;
    const file = join(dir, "keep.csv");
    writeFileSync(file, `employee_id,relationship,first_name,last_name,date_of_birth,ssn\nE1,self,${m.firstName},${m.lastName},${m.dateOfBirth},${m.ssn}\n`);
    const r = await run(["census", "plan", file, "--group", gp, "--json"], env);
    expect(r.code, r.stderr).toBe(0);
    const p = JSON.parse(r.stdout.trim().split("\n").pop()!);
    expect([p.unchanged, p.addSubscribers, p.unmatched]).toEqual([1, [], []]);
  });

  it("refuses the embedded sandbox, which would vanish with the command", async () => {
    const r = await run(["census", "apply", census("emb", "Emb", "902-30-0002"), "--group", "G", "--env", "sandbox"], {});
    expect(r.code).toBe(2);
    expect(r.stderr).toContain("embedded sandbox");
  });

  it("reports a request the service rejects (its status and field paths, never its text: enroll answers carry people) and the portal advice", async () => {
    sb.setFaults({ pathPrefix: "/v3/groups", http400: 1, errorMessage: "Subscriber Rej Guard rejected", errorIssues: [{ path: ["subscribers", 0, "self", "dateOfBirth"], message: "Rej Guard is too old", code: "custom" }] });
    try {
      const r = await run(["census", "apply", census("rej", "Rej", "902-30-0003"), "--group", group().id, "--result", join(dir, "rej.json")]);
      expect(r.code).toBe(1);
      expect(r.stdout).toContain("answered 400");
      expect(r.stdout).toContain("subscribers.0.self.dateOfBirth");
      expect(r.stdout).toContain("the details of a failed request are in the service's portal");
      expect(`${r.stdout}${r.stderr}${readFileSync(join(dir, "rej.json"), "utf8")}`).not.toMatch(/Rej Guard/);
      const result = JSON.parse(readFileSync(join(dir, "rej.json"), "utf8"));
      expect(result.status).toBe("failed");
      expect(result.requests.map((q: { outcome: string }) => q.outcome)).toEqual(["failed"]);
    } finally {
      sb.setFaults({});
    }
    expect(named("Rej")).toHaveLength(0);
  });

  it("a failure after writes were sent (the member listing down) still leaves a result file saying what was sent", async () => {
    // The listing before the writes answers; the one after them (to learn the UUIDs) fails.
    sb.setFaults({ pathPrefix: "/v2/members", afterRequests: group().plans.length, http503: 1 });
    try {
      const r = await run(["census", "apply", census("down", "Down", "902-30-0005"), "--group", group().id, "--result", join(dir, "down.json")]);
      expect(r.code).toBe(1);
      const result = JSON.parse(readFileSync(join(dir, "down.json"), "utf8"));
      expect(result.status).toBe("failed");
      expect(result.requests.map((q: { kind: string; outcome: string }) => `${q.kind} ${q.outcome}`)).toEqual(["add-subscriber succeeded"]);
      expect(result.stoppedBy).toContain("503");
      expect(r.stdout).toContain("Result file:");
    } finally {
      sb.setFaults({});
    }
    expect(named("Down")).toHaveLength(1);
  });

  it("reports an enrollment request that fails with its field paths (not its text) and the portal advice", async () => {
    // A proxy answers every poll as failed, as a service does when it rejects the enrollment later.
    const proxy: Server = createServer((req, res) => {
      if ((req.url ?? "").startsWith("/v1/enrollmentRequests/")) {
        res.writeHead(200, { "content-type": "application/json" });
        return void res.end(JSON.stringify({ id: req.url!.split("/").pop(), status: "failed", errors: [{ path: ["subscribers", 0, "self"], message: "duplicate enrollee Late Guard", code: "custom" }] }));
      }
      const chunks: Buffer[] = [];
      req.on("data", (c: Buffer) => chunks.push(c));
      req.on("end", () => {
        const up = request(`${sb.baseUrl}${req.url}`, { method: req.method, headers: req.headers }, (upRes) => {
          res.writeHead(upRes.statusCode ?? 500, upRes.headers);
          upRes.pipe(res);
        });
        up.end(Buffer.concat(chunks));
      });
    });
    await new Promise<void>((r) => proxy.listen(0, "127.0.0.1", r));
    try {
      const r = await run(["census", "apply", census("late", "Late", "902-30-0004"), "--group", group().id, "--json"], { BENEFITS_BASE_URL: `http://127.0.0.1:${(proxy.address() as AddressInfo).port}` });
      expect(r.code).toBe(1);
      const out = JSON.parse(r.stdout.trim().split("\n").pop()!);
      expect(out.status).toBe("failed");
      expect(out.requests).toEqual([expect.objectContaining({ kind: "add-subscriber", outcome: "failed", message: expect.stringMatching(/^enrollment request \S+ failed: .*1 errors entry; fields: subscribers\.0\.self; the details of a failed request are in the service's portal$/) })]);
      expect(r.stdout + r.stderr).not.toContain("Late Guard");
    } finally {
      await new Promise<void>((r) => proxy.close(() => r()));
    }
  });

  it("exits 75, sending nothing, while another apply holds the group's journal; the holder finishes as usual", async () => {
    // A proxy holds the answers of the first apply's polls until the second apply has been refused.
    const held: (() => void)[] = [];
    let holding = true;
    const proxy: Server = createServer((req, res) => {
      const chunks: Buffer[] = [];
      req.on("data", (c: Buffer) => chunks.push(c));
      req.on("end", () => {
        const forward = () => {
          const up = request(`${sb.baseUrl}${req.url}`, { method: req.method, headers: req.headers }, (upRes) => {
            res.writeHead(upRes.statusCode ?? 500, upRes.headers);
            upRes.pipe(res);
          });
          up.end(Buffer.concat(chunks));
        };
        if (holding && (req.url ?? "").startsWith("/v1/enrollmentRequests/")) held.push(forward);
        else forward();
      });
    });
    await new Promise<void>((r) => proxy.listen(0, "127.0.0.1", r));
    try {
      const holder = startCli(["census", "apply", census("holder", "Holder", "902-30-0007"), "--group", group().id], {
        BENEFITS_API_KEY: sb.keys.full,
        BENEFITS_DB: join(dir, "snap.db"),
        BENEFITS_BASE_URL: `http://127.0.0.1:${(proxy.address() as AddressInfo).port}`,
      }, dir);
      await waitUntil("the first apply polling its enrollment request", () => held.length > 0);
      const writesBefore = sb.stats().writes;
      const busy = await run(["census", "apply", census("second", "Second", "902-30-0008"), "--group", group().id]);
      expect(busy.code).toBe(75);
      expect(busy.stderr).toContain(`another census apply (pid ${holder.child.pid}) is working on this group`);
      expect(sb.stats().writes).toEqual(writesBefore);
      holding = false;
      for (const forward of held.splice(0)) forward();
      const done = await holder.done;
      expect(done.code, done.stderr).toBe(0);
    } finally {
      holding = false;
      for (const forward of held.splice(0)) forward();
      await new Promise<void>((r) => proxy.close(() => r()));
    }
    expect(named("Holder")).toHaveLength(1);
    expect(named("Second")).toHaveLength(0);
  });

  it("refuses a file without its header row in plan and apply with one problem, and prints none of its first row (issue 38)", async () => {
    const db = join(dir, "headerless.db");
    const env = { BENEFITS_BASE_URL: sb.baseUrl, BENEFITS_DB: db };
    expect((await run(["sync"], env)).code).toBe(0);
    const file = join(dir, "headerless.csv");
    writeFileSync(file, `900-10-0002,self,nadia,Okafor,1991-03-04,900-10-0002,${group().plans[0]!.id}\n`);
    const before = sb.stats().requests;
    for (const command of ["plan", "apply"]) {
      const r = await run(["census", command, file, "--group", group().id], env);
      expect(r.code, `census ${command}: ${r.stderr}`).toBe(2);
      expect(r.stderr).toContain("the first row is not a header (none of its 7 cells names a column)");
      expect(`${r.stdout}\n${r.stderr}`).not.toMatch(/900|nadia|Okafor|1991/i);
    }
    expect(sb.stats().requests).toBe(before);
  });
});


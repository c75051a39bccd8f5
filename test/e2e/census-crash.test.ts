import { createServer, request, type Server } from "node:http";
import type { AddressInfo } from "node:net";
import { existsSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { mkdirSync } from "node:fs";
import { startSandbox, type GroupRec, type MemberRec, type Sandbox } from "../../src/sandbox/index.js";
// The expected token is worked out in the test (node:crypto), never by the product's own rule.
import { expectedSsnToken as ssnToken } from "../helpers/ssn-oracle.js";
import { startCli, type CliRun } from "../helpers/cli-process.js";
import { censusSsns, expectNoCensusSsn, writtenFiles, type Place } from "../helpers/census-ssn-scan.js";
import { waitUntil } from "../helpers/wait.js";

/**
 * An apply that is killed, or whose answers are lost, never applies a row twice: checked against
 * the sandbox's own records (its members, and the enrollment requests it accepted: one 202 each).
 */
let sb: Sandbox;
let dir: string;
/** What every run printed, and the census files written, for the SSN scan at the end of each test. */
let outputs: Place[];
let censusFiles: string[];

beforeEach(async () => {
  dir = mkdtempSync(join(tmpdir(), "bsync-census-crash-"));
  outputs = [];
  censusFiles = [];
});
afterEach(async () => {
  await sb?.close();
  rmSync(dir, { recursive: true, force: true });
});

const HEADER = "employee_id,relationship,first_name,last_name,date_of_birth,ssn,plan_id";
function newHires(group: GroupRec, n: number, prefix = "Hire", ssnGroup = "20"): { file: string; names: string[] } {
  const plan = group.plans[0]!.id;
  const names = Array.from({ length: n }, (_, i) => `${prefix}${i + 1}`);
  const file = join(dir, `${prefix}.csv`);
  censusFiles.push(file);
  writeFileSync(file, `${HEADER}\n${names.map((name, i) => `E${i + 1},self,${name},Crash,1990-01-${String(i + 10)},901-${ssnGroup}-${String(1000 + i)},${plan}`).join("\n")}\n`);
  return { file, names };
}
const hiresIn = (gp: string) => ([...sb.iterate("members")] as MemberRec[]).filter((m) => m.lastName === "Crash" && m.coverages.some((c) => c.groupPolicyId === gp));
const env = (baseUrl: string) => ({ BENEFITS_BASE_URL: baseUrl, BENEFITS_API_KEY: sb.keys.full, BENEFITS_DB: join(dir, "snap.db") });
/** `benefits-sync ARGS`, its output kept for the SSN scan (a killed run's too). */
function cli(args: string[], environment: Record<string, string>): CliRun {
  const run = startCli(args, environment, dir);
  return { child: run.child, done: run.done.then((r) => (outputs.push([`${args.join(" ")} stdout`, r.stdout], [`${args.join(" ")} stderr`, r.stderr]), r)) };
}
/** No census SSN in any output or any file written (journal, result files, the PII key's folder). */
function expectNoSsnWritten(): void {
  expectNoCensusSsn([...outputs, ...writtenFiles(dir, censusFiles)], censusFiles.flatMap((f) => censusSsns(readFileSync(f, "utf8"))));
}

describe("census apply across a crash and lost answers", () => {
  it("kill -9 while an enrollment request is being polled, then apply again: every row applied once", async () => {
    // The service takes longer to apply an enrollment than the next apply takes to start: the
    // member listing alone would not show the first request's hire yet, and it would be sent twice.
    sb = await startSandbox({ members: 80, groups: 2, seed: 31, enrollmentDelayMs: 4000 });
    const group = [...sb.iterate("groups")].at(-1)!;
    const { file, names } = newHires(group, 3);
    const args = ["census", "apply", file, "--group", group.id, "--batch-size", "1"];
    const journal = join(dir, "snap.db.census", `${group.id}.journal.jsonl`);
    const first = cli(args, env(sb.baseUrl));
    // Killed once the first request was accepted and is being polled (accepted, no outcome yet).
    await waitUntil("an accepted enrollment request still being polled", () => {
      if (!existsSync(journal)) return false;
      const entries = readFileSync(journal, "utf8").split("\n").filter(Boolean).map((l) => JSON.parse(l) as { t: string; id: string });
      const accepted = entries.filter((e) => e.t === "accepted");
      return accepted.length >= 1 && !entries.some((e) => e.t === "outcome" && e.id === accepted.at(-1)!.id);
    });
    first.child.kill("SIGKILL");
    expect((await first.done).signal).toBe("SIGKILL");
    expect(hiresIn(group.id).length).toBeLessThan(names.length);

    const second = await cli([...args, "--result", join(dir, "result.json")], env(sb.baseUrl)).done;
    expect(second.code, second.stderr).toBe(0);
    const hires = hiresIn(group.id);
    expect(hires.map((m) => m.firstName).sort()).toEqual(names);
    // One accepted add-subscriber per row, across both applies.
    expect(sb.stats().byStatus["202"]).toBe(names.length);
    const result = JSON.parse(readFileSync(join(dir, "result.json"), "utf8"));
    expect(result.settledFromEarlier.map((r: { outcome: string; enrollmentRequestId?: string }) => [r.outcome, typeof r.enrollmentRequestId])).toEqual([["succeeded", "string"]]);
    expect(result.requests.length).toBe(names.length - 1);
    expect(result.learned.map((l: { memberId: string }) => l.memberId).sort()).toEqual(hires.map((m) => m.id).sort());
    // The sandbox's own count of what reached it: one add-subscriber per row, no other write.
    expect(sb.stats().writes).toEqual({ [`POST /v3/groups/${group.id}/enroll/add-subscriber`]: names.length });
    expectNoSsnWritten();
  });

  it("a write whose answer is lost (or unreadable) is looked for, not sent again when it landed, sent again when it did not", async () => {
    sb = await startSandbox({ members: 80, groups: 2, seed: 32, enrollmentDelayMs: 50 });
    const group = [...sb.iterate("groups")].at(-1)!;
    const { file, names } = newHires(group, 2);
    // A proxy that loses the answer of the first add-subscriber ("landed"), or drops it unsent ("dropped").
    let mode: "landed" | "dropped" | "reshaped" = "landed";
    let fired = false;
    const proxy: Server = createServer((req, res) => {
      const chunks: Buffer[] = [];
      req.on("data", (c: Buffer) => chunks.push(c));
      req.on("end", () => {
        const target = !fired && req.method === "POST" && (req.url ?? "").includes("/enroll/add-subscriber");
        if (target) fired = true;
        if (target && mode === "dropped") return void req.socket.destroy();
        const up = request(`${sb.baseUrl}${req.url}`, { method: req.method, headers: req.headers }, (upRes) => {
          const body: Buffer[] = [];
          upRes.on("data", (c: Buffer) => body.push(c));
          upRes.on("end", () => {
            if (target && mode === "reshaped") {
              // Accepted, but answered in a shape the spec leaves open (`{id}`): the client cannot read it.
              const { enrollmentRequestId } = JSON.parse(Buffer.concat(body).toString()) as { enrollmentRequestId: string };
              res.writeHead(202, { "content-type": "application/json" });
              return void res.end(JSON.stringify({ id: enrollmentRequestId }));
            }
            if (target) return void req.socket.destroy();
            res.writeHead(upRes.statusCode ?? 500, upRes.headers);
            res.end(Buffer.concat(body));
          });
        });
        up.end(Buffer.concat(chunks));
      });
    });
    await new Promise<void>((r) => proxy.listen(0, "127.0.0.1", r));
    const via = `http://127.0.0.1:${(proxy.address() as AddressInfo).port}`;
    try {
      const landed = await cli(["census", "apply", file, "--group", group.id, "--batch-size", "5", "--result", join(dir, "landed.json")], env(via)).done;
      expect(landed.code, landed.stderr).toBe(0);
      expect(hiresIn(group.id).map((m) => m.firstName).sort()).toEqual(names);
      expect(sb.stats().byStatus["202"]).toBe(1);
      expect(JSON.parse(readFileSync(join(dir, "landed.json"), "utf8")).requests.map((r: { outcome: string }) => r.outcome)).toEqual(["found-applied"]);

      // The same story where the request never arrived: looked for during the settle window, then sent again.
      const more = newHires(group, 3, "Late", "21");
      mode = "dropped";
      fired = false;
      const dropped = await cli(["census", "apply", more.file, "--group", group.id, "--settle-seconds", "1", "--result", join(dir, "dropped.json")], env(via)).done;
      expect(dropped.code, dropped.stderr).toBe(0);
      expect(hiresIn(group.id).filter((m) => m.firstName.startsWith("Late")).map((m) => m.firstName).sort()).toEqual(["Late1", "Late2", "Late3"]);
      expect(sb.stats().byStatus["202"]).toBe(2);
      expect(JSON.parse(readFileSync(join(dir, "dropped.json"), "utf8")).requests.map((r: { outcome: string }) => r.outcome)).toEqual(["not-applied", "succeeded"]);

      // An answer the client cannot read is no answer: the write may have landed, so it is looked for.
      const odd = newHires(group, 1, "Odd", "22");
      mode = "reshaped";
      fired = false;
      const reshaped = await cli(["census", "apply", odd.file, "--group", group.id, "--result", join(dir, "odd.json")], env(via)).done;
      expect(reshaped.code, reshaped.stderr).toBe(0);
      expect(hiresIn(group.id).filter((m) => m.firstName === "Odd1")).toHaveLength(1);
      expect(sb.stats().byStatus["202"]).toBe(3);
      // A client that cannot read `{id}` looks at the listing (found-applied); one that reads it polls (succeeded). Either way: once.
      expect(["found-applied", "succeeded"]).toContain(JSON.parse(readFileSync(join(dir, "odd.json"), "utf8")).requests[0].outcome);
      // What reached the sandbox: the landed one, the one sent again after the drop (the dropped one never arrived), the reshaped one.
      expect(sb.stats().writes).toEqual({ [`POST /v3/groups/${group.id}/enroll/add-subscriber`]: 3 });
    } finally {
      await new Promise<void>((r) => proxy.close(() => r()));
    }
    expectNoSsnWritten();
  });

  it("a write an earlier apply recorded but never heard back from (killed before the answer): looked for, then sent only if absent", async () => {
    sb = await startSandbox({ members: 80, groups: 2, seed: 33, enrollmentDelayMs: 50 });
    const group = [...sb.iterate("groups")].at(-1)!;
    const { file, names } = newHires(group, 2);
    const piiKey = "census-test-pii-key-0123456789";
    const token = (ssn: string) => ssnToken(ssn.replace(/\D/g, ""), Buffer.from(piiKey, "utf8"));
    const run = (extra: string[]) => cli(["census", "apply", file, "--group", group.id, ...extra], { ...env(sb.baseUrl), BENEFITS_PII_KEY: piiKey }).done;
    // The first hire is applied for real; then a journal is left saying both were being sent when the process died.
    const one = join(dir, "one.csv");
    writeFileSync(one, readFileSync(file, "utf8").split("\n").slice(0, 2).join("\n") + "\n");
    censusFiles.push(one);
    expect((await cli(["census", "apply", one, "--group", group.id], { ...env(sb.baseUrl), BENEFITS_PII_KEY: piiKey }).done).code).toBe(0);
    expect(hiresIn(group.id).map((m) => m.firstName)).toEqual(["Hire1"]);
    const journal = join(dir, "snap.db.census", `${group.id}.journal.jsonl`);
    mkdirSync(join(dir, "snap.db.census"), { recursive: true });
    const intent = (id: string, line: number, ssn: string) => JSON.stringify({ t: "intent", id, kind: "add-subscriber", lines: [line], tokens: [token(ssn)], at: "2026-01-01T00:00:00Z" });
    writeFileSync(journal, `${intent("x1", 2, "901-20-1000")}\n${intent("x2", 3, "901-20-1001")}\n`, { flag: "a" });
    const accepted = sb.stats().byStatus["202"];

    const r = await run(["--settle-seconds", "1", "--result", join(dir, "r.json")]);
    expect(r.code, r.stderr).toBe(0);
    const result = JSON.parse(readFileSync(join(dir, "r.json"), "utf8"));
    expect(result.settledFromEarlier.map((w: { lines: number[]; outcome: string }) => [w.lines, w.outcome])).toEqual([
      [[2], "found-applied"],
      [[3], "not-applied"],
    ]);
    // Hire1 was found, never sent again; Hire2 was absent, so it was sent once.
    expect(result.requests.map((q: { lines: number[]; outcome: string }) => [q.lines, q.outcome])).toEqual([[[3], "succeeded"]]);
    expect(sb.stats().byStatus["202"]).toBe(accepted! + 1);
    expect(hiresIn(group.id).map((m) => m.firstName).sort()).toEqual(names);
    expectNoSsnWritten();
  });
});

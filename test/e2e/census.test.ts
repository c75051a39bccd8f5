import { existsSync, mkdtempSync, readFileSync, rmSync, statSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { startSandbox, type MemberRec, type Sandbox } from "../../src/sandbox/index.js";
import { startCli } from "../helpers/cli-process.js";
import { expectNoCensusSsn, writtenFiles } from "../helpers/census-ssn-scan.js";

/**
 * census plan and census apply, end to end: the built CLI against the sandbox over loopback, a
 * real snapshot. The expected plan is written from the sandbox's own records, never from the code
 * under test, and the sandbox's records are what "applied" is checked against.
 */
let sb: Sandbox;
let dir: string;
const outputs: [string, string][] = [];

const HEADER = "employee_id,relationship,first_name,last_name,date_of_birth,ssn,address_line1,city,plan_id,coverage_end";
type Cells = { emp: string; rel: string; first: string; last: string; dob: string; ssn: string; line1?: string; city?: string; plan?: string; end?: string };
const csvLine = (c: Cells) => [c.emp, c.rel, c.first, c.last, c.dob, c.ssn, c.line1 ?? "", c.city ?? "", c.plan ?? "", c.end ?? ""].join(",");

function cli(args: string[], key = sb.keys.full) {
  return startCli(args, { BENEFITS_BASE_URL: sb.baseUrl, BENEFITS_API_KEY: key, BENEFITS_DB: join(dir, "snap.db") }, dir).done.then((r) => {
    outputs.push([`${args.join(" ")} stdout`, r.stdout], [`${args.join(" ")} stderr`, r.stderr]);
    return r;
  });
}
const members = () => [...sb.iterate("members")] as MemberRec[];
const inGroup = (m: MemberRec, gp: string) => m.coverages.find((c) => c.groupPolicyId === gp);

beforeAll(async () => {
  sb = await startSandbox({ members: 160, groups: 2, seed: 25, enrollmentDelayMs: 40 });
  dir = mkdtempSync(join(tmpdir(), "bsync-census-"));
});
afterAll(async () => {
  await sb?.close();
  rmSync(dir, { recursive: true, force: true });
});

describe("census plan and apply against the sandbox", () => {
  it("plans exactly the file's changes, applies them once, sends nothing the second time, and never writes an SSN", async () => {
    expect((await cli(["sync"])).code).toBe(0);
    const openIn = (m: MemberRec, gp: string) => {
      const c = inGroup(m, gp);
      return m.relationship === "self" && c !== undefined && c.endDate === null && c.status === "active" && /^\d{3}-\d{2}-\d{4}$/.test(m.ssn);
    };
    // The group with the most open subscribers (the first listed may be last year's policy).
    const groups = [...sb.iterate("groups")];
    const count = (gp: string) => members().filter((m) => openIn(m, gp)).length;
    const group = groups.reduce((a, b) => (count(b.id) > count(a.id) ? b : a));
    const gp = group.id;
    const subs = members().filter((m) => openIn(m, gp));
    expect(subs.length).toBeGreaterThan(6);
    const [h1, h2, h3, h4, h5, h6] = subs;
    const plan = inGroup(h1!, gp)!.planId;
    // A member moving to another plan of the group: the group must have two.
    const fromPlan = inGroup(h6!, gp)!.planId;
    const toPlan = group.plans.map((x) => x.id).find((id) => id !== fromPlan);
    expect(toPlan, "a group with two plans").toBeDefined();
    const row = (m: MemberRec, extra: Partial<Cells> = {}): Cells => ({ emp: m.subscriberId, rel: "self", first: m.firstName, last: m.lastName, dob: m.dateOfBirth, ssn: m.ssn, ...extra });
    const end = inGroup(h3!, gp)!.startDate > sb.today ? inGroup(h3!, gp)!.startDate : sb.today;
    const lines: Cells[] = [
      row(h1!), // line 2: unchanged
      row(h2!, { line1: "1 Census Way", city: "Newtown" }), // line 3: a changed address
      row(h3!, { end }), // line 4: a termination
      row(h4!), // line 5: unchanged subscriber...
      { emp: h4!.subscriberId, rel: "child", first: "Newborn", last: h4!.lastName, dob: "2026-01-02", ssn: "900-10-0001" }, // line 6: ...with a new child
      { emp: "N1", rel: "self", first: "Nadia", last: "Hire", dob: "1991-03-04", ssn: "900-10-0002", line1: "5 Elm St", city: "Springfield", plan }, // line 7: a new hire
      { emp: "N1", rel: "spouse", first: "Noel", last: "Hire", dob: "1990-05-06", ssn: "900-10-0003", plan }, // line 8: her spouse
      { emp: "N1", rel: "child", first: "Nico", last: "Hire", dob: "2020-07-08", ssn: "900-10-0004", plan }, // line 9: her child
      { emp: "N2", rel: "employee", first: "Omar", last: "Second", dob: "1985-09-10", ssn: "900-10-0005", plan }, // line 10: another new hire
      { emp: "N3", rel: "self", first: "Bad", last: "Date", dob: "1990-13-01", ssn: "900-10-0006", plan }, // line 11: bad row (no such month)
      { emp: "N4", rel: "self", first: "Wrong", last: "Person", dob: "1970-01-01", ssn: h5!.ssn, plan }, // line 12: bad row (h5's SSN, another name and birth)
      row(h6!, { plan: toPlan }), // line 13: a plan change (line 12 once line 11 is removed)
    ];
    // The spec's rule 4, as this test reads it: the reason a plan change is refused.
    const planChangeReason = (line: number) => ({
      line,
      memberId: h6!.id,
      reason: `plan ${fromPlan} to ${toPlan}: a member changing plans cannot be done through the API: only plan changes started by the service operator are supported; notify the service operator`,
    });
    const file = join(dir, "census.csv");
    writeFileSync(file, `${HEADER}\n${lines.map(csvLine).join("\n")}\n`);
    const censusSsns = lines.map((l) => l.ssn);

    // The plan: exactly those, nothing sent.
    const before = JSON.stringify(members());
    const requestsBefore = sb.stats().requests;
    const planRun = await cli(["census", "plan", file, "--group", group.groupId, "--json"]);
    expect(planRun.code, planRun.stderr).toBe(0);
    const p = JSON.parse(planRun.stdout.trim().split("\n").pop()!);
    expect(p.sent).toBe(false);
    expect(p.addSubscribers).toEqual([
      { line: 7, plan, dependents: [8, 9] },
      { line: 10, plan, dependents: [] },
    ]);
    expect(p.addDependents).toEqual([{ line: 6, plan: inGroup(h4!, gp)!.planId, subscriberMemberId: h4!.id, subscriberCoverageId: inGroup(h4!, gp)!.subscriberCoverageId }]);
    expect(p.terminations).toEqual([{ line: 4, memberId: h3!.id, coverageId: inGroup(h3!, gp)!.id, terminationDate: end, currentEndDate: null }]);
    expect(p.updates).toEqual([{ line: 3, memberId: h2!.id, fields: ["address.line1", "address.city"] }]);
    expect(p.refused).toEqual([planChangeReason(13)]);
    expect(p.unmatched.map((u: { line: number }) => u.line)).toEqual([12]);
    expect(p.unmatched[0].reason).toContain(h5!.id);
    expect(p.problems).toEqual([{ line: 11, field: "date_of_birth", message: expect.stringContaining("calendar date") }]);
    expect(p.unchanged).toBe(2);
    const text = await cli(["census", "plan", file, "--group", gp]);
    expect(text.stdout).toContain("line 11, date_of_birth:");
    expect(text.stdout).toContain("Nothing was sent");
    expect(text.stdout).toContain(`  refused: 1\n    line 13: member ${h6!.id}: ${planChangeReason(13).reason}\n`);

    // apply refuses a file with a problem row: nothing is sent.
    const refused = await cli(["census", "apply", file, "--group", group.groupId]);
    expect(refused.code).toBe(2);
    expect(refused.stderr).toContain("line 11, date_of_birth:");
    expect(sb.stats().requests).toBe(requestsBefore);
    expect(JSON.stringify(members())).toBe(before);

    // The user removes the bad line; a read-only key gets the 403 advice, and the attempt is recorded.
    writeFileSync(file, `${HEADER}\n${lines.filter((_, i) => i !== 9).map(csvLine).join("\n")}\n`);
    const ro = await cli(["census", "apply", file, "--group", group.groupId, "--result", join(dir, "ro.json")], sb.keys.readOnly);
    expect(ro.code).toBe(1);
    expect(ro.stdout).toContain("403");
    expect(ro.stdout).toContain("service operator must adjust your organization's permissions");
    const roResult = JSON.parse(readFileSync(join(dir, "ro.json"), "utf8"));
    expect(roResult.requests.map((r: { outcome: string; answer: unknown }) => [r.outcome, r.answer])).toEqual([["forbidden", { status: 403 }]]);
    expect(JSON.stringify(members())).toBe(before);

    // apply: the sandbox's data comes to match the file.
    const writesAtFirst = sb.stats().writes;
    const applied = await cli(["census", "apply", file, "--group", group.groupId, "--result", join(dir, "first.json")]);
    expect(applied.code, applied.stderr).toBe(0);
    // What reached the sandbox, by its own count: one request per planned write, nothing else.
    const sentFirst = Object.fromEntries(Object.entries(sb.stats().writes).flatMap(([k, n]) => (n === (writesAtFirst[k] ?? 0) ? [] : [[k, n - (writesAtFirst[k] ?? 0)]])));
    expect(sentFirst).toEqual({
      [`POST /v3/groups/${gp}/enroll/add-subscriber`]: 1,
      [`POST /v3/groups/${gp}/enroll/${inGroup(h4!, gp)!.subscriberCoverageId}/add-dependent`]: 1,
      [`POST /v3/groups/${gp}/enroll/terminate`]: 1,
      [`PATCH /v2/members/${h2!.id}`]: 1,
    });
    const after = members();
    const find = (first: string, last: string, dob: string) => after.filter((m) => m.firstName === first && m.lastName === last && m.dateOfBirth === dob && inGroup(m, gp));
    const nadia = find("Nadia", "Hire", "1991-03-04");
    expect(nadia).toHaveLength(1);
    expect(nadia[0]!.address.line1).toBe("5 Elm St");
    for (const [f, l, d] of [["Noel", "Hire", "1990-05-06"], ["Nico", "Hire", "2020-07-08"]] as const) {
      const dep = find(f, l, d);
      expect(dep).toHaveLength(1);
      expect(dep[0]!.subscriberId).toBe(nadia[0]!.subscriberId);
    }
    expect(find("Omar", "Second", "1985-09-10")).toHaveLength(1);
    const newborn = find("Newborn", h4!.lastName, "2026-01-02");
    expect(newborn).toHaveLength(1);
    expect(newborn[0]!.subscriberId).toBe(h4!.subscriberId);
    expect(inGroup(after.find((m) => m.id === h3!.id)!, gp)!.endDate).toBe(end);
    expect(after.find((m) => m.id === h2!.id)!.address).toMatchObject({ line1: "1 Census Way", city: "Newtown" });
    expect(find("Wrong", "Person", "1970-01-01")).toHaveLength(0);
    const result = JSON.parse(readFileSync(join(dir, "first.json"), "utf8"));
    expect(result.status).toBe("succeeded");
    // The plan change was refused, nothing was sent for it (the writes above are all there were), and the sandbox still has h6 on its plan.
    expect(result.plan.refused).toEqual([planChangeReason(12)]);
    expect(Object.keys(sentFirst).filter((w) => w.includes(h6!.id))).toEqual([]);
    expect(inGroup(after.find((m) => m.id === h6!.id)!, gp)!.planId).toBe(fromPlan);
    expect(result.requests.map((r: { kind: string; outcome: string }) => `${r.kind} ${r.outcome}`).sort()).toEqual(
      ["add-subscriber succeeded", "add-dependent succeeded", "terminate succeeded", "patch-member succeeded"].sort(),
    );
    // What came back for each, as the client read it: the status and the shape, never a value.
    const answerOf = (kind: string) => result.requests.find((r: { kind: string }) => r.kind === kind).answer;
    expect(answerOf("add-subscriber")).toEqual({ status: 202, shape: "{enrollmentRequestId: string}" });
    expect(answerOf("add-dependent")).toEqual({ status: 202, shape: "{enrollmentRequestId: string}" });
    expect(answerOf("terminate")).toEqual({ status: 200, shape: expect.stringMatching(/^\{id: string, .*endDate: string, .*status: string/) });
    expect(answerOf("patch-member")).toEqual({ status: 200, shape: expect.stringMatching(/^\{id: string, .*firstName: string, .*ssn: string/) });
    expect(result.learned).toContainEqual({ line: 7, memberId: nadia[0]!.id, coverageId: inGroup(nadia[0]!, gp)!.id });
    expect(result.learned).toContainEqual({ line: 6, memberId: newborn[0]!.id, coverageId: inGroup(newborn[0]!, gp)!.id });

    // A second apply sends nothing: no write of any kind reaches the sandbox (its own count, by method and path).
    const settled = JSON.stringify(members());
    const accepted = sb.stats().byStatus["202"] ?? 0;
    const writesBefore = sb.stats().writes;
    const again = await cli(["census", "apply", file, "--group", group.groupId, "--result", join(dir, "second.json")]);
    expect(sb.stats().writes).toEqual(writesBefore);
    expect(again.code, again.stderr).toBe(0);
    expect(again.stdout).toContain("Nothing to send");
    expect(JSON.parse(readFileSync(join(dir, "second.json"), "utf8")).requests).toEqual([]);
    expect(sb.stats().byStatus["202"] ?? 0).toBe(accepted);
    expect(JSON.stringify(members())).toBe(settled);

    // No census SSN anywhere we wrote or printed: outputs, result files, journal, snapshot.
    const written = writtenFiles(dir, [file]);
    expect(written.some(([f]) => f.endsWith(".journal.jsonl"))).toBe(true);
    expectNoCensusSsn([...outputs, ...written], censusSsns);
    expect(existsSync(join(dir, "first.json"))).toBe(true);
    expect(statSync(join(dir, "first.json")).mode & 0o777).toBe(0o600);
  });
});

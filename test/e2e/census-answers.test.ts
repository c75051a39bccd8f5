import { mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { startSandbox, type MemberRec, type Sandbox, type SandboxOptions } from "../../src/sandbox/index.js";
import { startCli } from "../helpers/cli-process.js";
import { censusSsns, expectNoCensusSsn, writtenFiles, type Place } from "../helpers/census-ssn-scan.js";
import { waitUntil } from "../helpers/wait.js";

/**
 * census apply against a sandbox that answers every write in a shape the spec leaves open: an
 * empty 202 for the adds (no enrollment request id to poll), an empty 204 for terminate and patch.
 * Each request's record must say what came and what became of it truthfully: an add accepted
 * without an id is no lost answer. Checked against the sandbox's own records and counts.
 */
let sb: Sandbox;
let dir: string;
const outputs: Place[] = [];

beforeEach(() => void (dir = mkdtempSync(join(tmpdir(), "bsync-census-answers-"))));
afterEach(async () => {
  await sb?.close();
  rmSync(dir, { recursive: true, force: true });
});

const HEADER = "employee_id,relationship,first_name,last_name,date_of_birth,ssn,address_line1,city,coverage_end";
const EMPTY: NonNullable<SandboxOptions["answerShapes"]> = { addSubscriber: "empty", addDependent: "empty", terminate: "empty", patchMember: "empty" };

async function cli(args: string[]) {
  const r = await startCli(args, { BENEFITS_BASE_URL: sb.baseUrl, BENEFITS_API_KEY: sb.keys.full, BENEFITS_DB: join(dir, "snap.db") }, dir).done;
  outputs.push([`${args.join(" ")} stdout`, r.stdout], [`${args.join(" ")} stderr`, r.stderr]);
  return r;
}
const members = () => [...sb.iterate("members")] as MemberRec[];
/** The writes that reached the sandbox since `before` (its own count), by method and path. */
const since = (before: Record<string, number>) =>
  Object.fromEntries(Object.entries(sb.stats().writes).flatMap(([k, n]) => (n === (before[k] ?? 0) ? [] : [[k, n - (before[k] ?? 0)]])));
const resultOf = (name: string) => JSON.parse(readFileSync(join(dir, name), "utf8")) as { status: string; requests: { kind: string; outcome: string; answer?: unknown; message?: string }[]; settledFromEarlier: { kind: string; outcome: string; message?: string }[] };

/** The group with the most open subscribers, and two of them with one plan. */
function story() {
  const open = (m: MemberRec, gp: string) => m.relationship === "self" && m.coverages.some((c) => c.groupPolicyId === gp && c.endDate === null && c.status === "active");
  const groups = [...sb.iterate("groups")];
  const count = (gp: string) => members().filter((m) => open(m, gp)).length;
  const group = groups.reduce((a, b) => (count(b.id) > count(a.id) ? b : a));
  const subs = members().filter((m) => open(m, group.id));
  const cov = (m: MemberRec) => m.coverages.find((c) => c.groupPolicyId === group.id)!;
  return { group, subs, cov };
}

describe("census apply records each answer as it came", () => {
  it("empty answers: the adds are accepted with no request id and found in the listing, terminate and patch answer 204", async () => {
    sb = await startSandbox({ members: 120, groups: 2, seed: 27, enrollmentDelayMs: 30, answerShapes: EMPTY });
    const { group, subs, cov } = story();
    const [a, b, c] = subs;
    const plan = cov(a!).planId;
    const end = cov(b!).startDate > sb.today ? cov(b!).startDate : sb.today;
    const lines = [
      `${a!.subscriberId},self,${a!.firstName},${a!.lastName},${a!.dateOfBirth},${a!.ssn},,,`, // line 2: unchanged...
      `${a!.subscriberId},child,Empty,${a!.lastName},2025-12-01,903-40-0001,,,`, // line 3: ...with a new child
      `${b!.subscriberId},self,${b!.firstName},${b!.lastName},${b!.dateOfBirth},${b!.ssn},,,${end}`, // line 4: a termination
      `${c!.subscriberId},self,${c!.firstName},${c!.lastName},${c!.dateOfBirth},${c!.ssn},9 Answer Rd,Shapeville,`, // line 5: a changed address
      `N1,self,Quiet,Accept,1992-02-02,903-40-0002,,,`, // line 6: a new hire
    ];
    const file = join(dir, "census.csv");
    // plan_id is needed when the group has several plans: the hire joins a's plan.
    writeFileSync(file, `${HEADER},plan_id\n${lines.map((l, i) => `${l},${i === 4 ? plan : ""}`).join("\n")}\n`);

    const before = sb.stats().writes;
    const r = await cli(["census", "apply", file, "--group", group.id, "--result", join(dir, "first.json")]);
    expect(r.code, r.stderr).toBe(0);
    expect(since(before)).toEqual({
      [`POST /v3/groups/${group.id}/enroll/add-subscriber`]: 1,
      [`POST /v3/groups/${group.id}/enroll/${cov(a!).subscriberCoverageId}/add-dependent`]: 1,
      [`POST /v3/groups/${group.id}/enroll/terminate`]: 1,
      [`PATCH /v2/members/${c!.id}`]: 1,
    });
    const result = resultOf("first.json");
    expect(result.status).toBe("succeeded");
    const byKind = Object.fromEntries(result.requests.map((q) => [q.kind, q]));
    for (const kind of ["add-subscriber", "add-dependent"]) {
      expect(byKind[kind]).toMatchObject({ outcome: "accepted-listed", answer: { status: 202, shape: "empty" } });
      expect(byKind[kind]!.message).toBe("accepted (202, empty) with no enrollment request id to poll; its people are in the member listing");
      expect(byKind[kind]).not.toHaveProperty("enrollmentRequestId");
    }
    expect(byKind["terminate"]).toMatchObject({ outcome: "succeeded", answer: { status: 204, shape: "empty" } });
    expect(byKind["patch-member"]).toMatchObject({ outcome: "succeeded", answer: { status: 204, shape: "empty" } });
    expect(JSON.stringify(result)).not.toContain("the answer was lost");
    // The sandbox's records: each change there once.
    expect(members().filter((m) => m.firstName === "Empty" && m.dateOfBirth === "2025-12-01")).toHaveLength(1);
    expect(members().filter((m) => m.firstName === "Quiet" && m.lastName === "Accept")).toHaveLength(1);

    // A second apply: nothing reaches the sandbox.
    const settled = sb.stats().writes;
    const again = await cli(["census", "apply", file, "--group", group.id, "--result", join(dir, "second.json")]);
    expect(since(settled)).toEqual({});
    expect(again.code, again.stderr).toBe(0);
    expect(resultOf("second.json").requests).toEqual([]);
    expectNoCensusSsn([...outputs, ...writtenFiles(dir, [file])], censusSsns(readFileSync(file, "utf8")));
  });

  it("an add accepted with no request id that the listing does not show yet: not failed as lost, kept open, looked for first by the next apply, never sent twice", async () => {
    // The service applies the enrollment 5 s after it answers; the apply looks for 0 s.
    sb = await startSandbox({ members: 120, groups: 2, seed: 28, enrollmentDelayMs: 5000, answerShapes: { addSubscriber: "empty" } });
    const { group, subs, cov } = story();
    const file = join(dir, "hire.csv");
    writeFileSync(file, `employee_id,relationship,first_name,last_name,date_of_birth,ssn,plan_id\nN1,self,Slow,Accept,1993-03-03,903-40-0003,${cov(subs[0]!).planId}\n`);
    const before = sb.stats().writes;
    const first = await cli(["census", "apply", file, "--group", group.id, "--settle-seconds", "0", "--result", join(dir, "first.json")]);
    expect(first.code).toBe(1);
    const r1 = resultOf("first.json");
    expect(r1.requests).toEqual([
      expect.objectContaining({
        kind: "add-subscriber",
        outcome: "accepted-unlisted",
        answer: { status: 202, shape: "empty" },
        message: "accepted (202, empty) with no enrollment request id to poll; its people were not in the member listing within 0 s: the next apply looks at the listing again before sending anything for its rows",
      }),
    ]);
    // The service applies it; the next apply finds it from the journal and sends nothing.
    await waitUntil("the accepted hire in the sandbox", () => members().some((m) => m.firstName === "Slow" && m.lastName === "Accept"));
    const second = await cli(["census", "apply", file, "--group", group.id, "--settle-seconds", "0", "--result", join(dir, "second.json")]);
    expect(second.code, second.stderr).toBe(0);
    const r2 = resultOf("second.json");
    expect(r2.settledFromEarlier).toEqual([expect.objectContaining({ kind: "add-subscriber", outcome: "accepted-listed", message: expect.stringContaining("accepted by an earlier apply") })]);
    expect(r2.requests).toEqual([]);
    expect(since(before)).toEqual({ [`POST /v3/groups/${group.id}/enroll/add-subscriber`]: 1 });
    expect(members().filter((m) => m.firstName === "Slow" && m.lastName === "Accept")).toHaveLength(1);
    expectNoCensusSsn([...outputs, ...writtenFiles(dir, [file])], ["903-40-0003"]);
  });
});

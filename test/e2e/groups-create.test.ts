/**
 * `benefits-sync groups create FILE`, the built CLI against `benefits-sync sandbox` in its own
 * process. The sandbox answers the writes in shapes other than our reading (an empty 201 for the new
 * group, `{id}` for add-subscriber, statuses spelled `COMPLETED`), so the client's tolerance is
 * exercised over loopback. What happened is checked in the sandbox's own listings, not in our output.
 */
import { mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { request } from "undici";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { startCli, type CliRun } from "../helpers/cli-process.js";
import { waitUntil } from "../helpers/wait.js";

let dir: string;
let sandbox: CliRun;
let url: string;
let fullKey: string;
let readOnlyKey: string;
let refs: { planDesignId: string; benefitBundleId: string; vendorId: string };

async function get(path: string): Promise<{ data: Record<string, unknown>[] }> {
  const out: Record<string, unknown>[] = [];
  let after: string | undefined;
  for (;;) {
    const sep = path.includes("?") ? "&" : "?";
    const res = await request(`${url}${path}${after ? `${sep}startAfter=${after}` : ""}`, { headers: { authorization: `Bearer ${fullKey}` } });
    const page = (await res.body.json()) as { data: Record<string, unknown>[]; hasMore: boolean };
    out.push(...page.data);
    if (!page.hasMore || page.data.length === 0) return { data: out };
    after = page.data[page.data.length - 1]?.id as string;
  }
}

beforeAll(async () => {
  dir = mkdtempSync(join(tmpdir(), "bsync-groups-"));
  sandbox = startCli(["sandbox", "--members", "300", "--seed", "3", "--today", "2026-01-15", "--answer-shapes", "createGroup=empty,addSubscriber=id,enrollmentStatus=upper"], {});
  let out = "";
  sandbox.child.stdout!.on("data", (d: Buffer) => (out += d.toString()));
  url = await waitUntil("the sandbox's banner", () => /listening on (http:\/\/127\.0\.0\.1:\d+)/.exec(out)?.[1]);
  fullKey = await waitUntil("the full key", () => /full key:\s+(\S+)/.exec(out)?.[1]);
  readOnlyKey = await waitUntil("the read-only key", () => /read-only key:\s+(\S+)/.exec(out)?.[1]);
  const design = (await get("/v2/designs")).data[0] as { id: string; configuration: { vendorIds: string[]; benefitBundleIds: string[] } };
  refs = { planDesignId: design.id, benefitBundleId: design.configuration.benefitBundleIds[0] as string, vendorId: design.configuration.vendorIds[0] as string };
});
afterAll(async () => {
  sandbox.child.kill("SIGTERM");
  await sandbox.done;
  rmSync(dir, { recursive: true, force: true });
});

const SSNS = ["401-55-1001", "401-55-1002", "401-55-1003", "401-55-1004"];
const person = (firstName: string, ssn: string, memberType = "employee") => ({ firstName, lastName: "Onboard", dateOfBirth: "1984-03-09", ssn, memberType });

function groupFile(name: string, fields: Record<string, unknown>, subscribers?: unknown[]): string {
  const file = join(dir, name);
  const group = { groupId: "G-ONB-1", adminEmail: "hr@onboard.example.com", sponsorName: "Onboard Inc", ein: "77-1234567", ...refs, effectiveDate: "2026-02-01", terminationDate: "2027-01-31", ...fields };
  writeFileSync(file, JSON.stringify(subscribers ? { ...group, subscribers } : group));
  return file;
}

const cli = (args: string[], env: Record<string, string> = {}) => startCli(args, { BENEFITS_BASE_URL: url, BENEFITS_API_KEY: fullKey, ...env }, dir).done;
const setFaults = (plan: unknown) => request(`${url}/_sandbox/faults`, { method: "POST", body: JSON.stringify(plan), headers: { "content-type": "application/json" } }).then((r) => r.body.dump());
const statusCount = async (key: string) => ((await (await request(`${url}/_sandbox/info`)).body.json()) as { stats: { byStatus: Record<string, number> } }).stats.byStatus[key] ?? 0;
const lostCount = () => statusCount("lost");
/** Run `fn` with the sandbox's fault plan set, and clear the plan afterwards whatever happens. */
async function underFaults<T>(plan: unknown, fn: () => Promise<T>): Promise<T> {
  await setFaults(plan);
  try {
    return await fn();
  } finally {
    await setFaults({});
  }
}
const groupsNamed = async (groupId: string) => (await get("/v2/groups")).data.filter((g) => g.groupId === groupId);

describe("benefits-sync groups create", () => {
  it("creates the group, enrolls its members with initial-enrollment, and a second run sends nothing", async () => {
    const members = [
      { ...person("Ada", SSNS[0]!), memberId: "acme-e-1" },
      { ...person("Bo", SSNS[1]!, "dependent"), memberId: "acme-d-1" },
      { ...person("Cy", SSNS[2]!, "dependent"), memberId: "acme-d-2" },
      { ...person("Di", SSNS[3]!), memberId: "acme-e-2", address: { line1: "1 Main St", city: "Springfield", state: "IL", zip: "62701" }, email: "di@acme.example" },
    ];
    const file = groupFile("acme.json", { members });
    const first = await cli(["groups", "create", file, "--json"]);
    expect(first.stderr).toBe("");
    expect(first.code).toBe(0);
    const report = JSON.parse(first.stdout) as { group: { groupPolicyId: string; how: string; answer: { status: number; shape: string } }; members: Record<string, number> };
    expect(report.group.how).toBe("created");
    expect(report.group.answer).toEqual({ status: 201, shape: "empty" });
    expect(report.members).toEqual({ enrolled: 4, already: 0, failed: 0, unknown: 0, notSent: 0 });

    const listed = await groupsNamed("G-ONB-1");
    expect(listed.map((g) => g.id)).toEqual([report.group.groupPolicyId]);
    // The sandbox's own records: initial-enrollment keeps the caller's memberId and starts coverage on
    // the group's effective date (add-subscriber would have minted ids and started today, 2026-01-15).
    const enrolled = (await get("/v2/members?groupId=G-ONB-1")).data as { id: string; firstName: string; subscriberId: string; email?: string | null; coverages: { startDate: string }[] }[];
    expect(enrolled.map((m) => [m.id, m.firstName]).sort()).toEqual([["acme-d-1", "Bo"], ["acme-d-2", "Cy"], ["acme-e-1", "Ada"], ["acme-e-2", "Di"]]);
    expect(enrolled.flatMap((m) => m.coverages.map((c) => c.startDate))).toEqual(["2026-02-01", "2026-02-01", "2026-02-01", "2026-02-01"]);
    const byId = new Map(enrolled.map((m) => [m.id, m]));
    expect(byId.get("acme-d-1")!.subscriberId).toBe(byId.get("acme-e-1")!.subscriberId);
    expect(byId.get("acme-e-2")!.subscriberId).not.toBe(byId.get("acme-e-1")!.subscriberId);
    expect(byId.get("acme-e-2")!.email).toBe("di@acme.example");

    // Every write under /v2/groups/ would be counted as a lost answer: a second run must send none.
    const lostBefore = await lostCount();
    const again = await underFaults({ pathPrefix: "/v2/groups/", lostAnswer: 1 }, () => cli(["groups", "create", file]));
    expect(again.stderr).toBe("");
    expect(again.code).toBe(0);
    expect(again.stdout).toContain("group G-ONB-1: already there (an earlier run created it)");
    expect(again.stdout).toContain("members: 0 enrolled, 4 already enrolled, 0 failed, 0 unknown, 0 not sent");
    expect((await lostCount()) - lostBefore).toBe(0);
    expect(await groupsNamed("G-ONB-1")).toHaveLength(1);
    expect((await get("/v2/members?groupId=G-ONB-1")).data).toHaveLength(4);
    for (const ssn of SSNS) expect(`${first.stdout}${first.stderr}${again.stdout}${again.stderr}`).not.toContain(ssn);
  });

  it("an initial enrollment whose answer was lost is looked for in the member listing: enrolled once, not sent again", async () => {
    const members = [{ ...person("Lia", "401-55-1011"), memberId: "lost-e-1" }, { ...person("Max", "401-55-1012", "dependent"), memberId: "lost-d-1" }];
    const file = groupFile("lost-members.json", { groupId: "G-ONB-LOSTM", adminEmail: "lostm@onboard.example.com", ein: "33-4444444", members });
    const lostBefore = await lostCount();
    const badBefore = await statusCount("400");
    const r = await underFaults({ pathPrefix: "/v2/groups/", lostAnswer: 1 }, () => cli(["groups", "create", file]));
    expect(r.stderr).toBe("");
    expect(r.code).toBe(0);
    expect(r.stdout).toContain("members: 2 enrolled, 0 already enrolled, 0 failed, 0 unknown, 0 not sent");
    // Sent exactly once: a second send would have been lost too, or refused (the memberIds taken).
    expect((await lostCount()) - lostBefore).toBe(1);
    expect((await statusCount("400")) - badBefore).toBe(0);
    const enrolled = (await get("/v2/members?groupId=G-ONB-LOSTM")).data;
    expect(enrolled.map((m) => m.id).sort()).toEqual(["lost-d-1", "lost-e-1"]);
  });

  it("subscribers are still enrolled with add-subscriber, after the members", async () => {
    const file = groupFile("both.json", {
      groupId: "G-ONB-BOTH",
      adminEmail: "both@onboard.example.com",
      ein: "33-5555555",
      members: [{ ...person("Nia", "401-55-1021"), memberId: "both-e-1" }],
      subscribers: [{ self: person("Oli", "401-55-1022") }],
    });
    const r = await cli(["groups", "create", file]);
    expect(r.stderr).toBe("");
    expect(r.code).toBe(0);
    expect(r.stdout).toContain("members: 1 enrolled, 0 already enrolled, 0 failed, 0 unknown, 0 not sent");
    expect(r.stdout).toContain("subscribers: 1 enrolled, 0 already enrolled, 0 failed, 0 unknown, 0 not sent");
    const enrolled = (await get("/v2/members?groupId=G-ONB-BOTH")).data as { id: string; firstName: string; coverages: { startDate: string }[] }[];
    const byName = new Map(enrolled.map((m) => [m.firstName, m]));
    expect(byName.get("Nia")!.id).toBe("both-e-1");
    expect(byName.get("Nia")!.coverages[0]!.startDate).toBe("2026-02-01");
    expect(byName.get("Oli")!.id).not.toBe("both-e-1");
    expect(byName.get("Oli")!.coverages[0]!.startDate).toBe("2026-01-15");
  });

  it("a create whose answer was lost is looked for in the listing, found, and not sent again", async () => {
    const lostBefore = ((await (await request(`${url}/_sandbox/info`)).body.json()) as { stats: { byStatus: Record<string, number> } }).stats.byStatus.lost ?? 0;
    await setFaults({ pathPrefix: "/v2/groups", lostAnswer: 1 });
    try {
      const r = await cli(["groups", "create", groupFile("lost.json", { groupId: "G-ONB-LOST", adminEmail: "lost@onboard.example.com", ein: "33-3333333" }, [{ self: person("Lu", "401-55-1009") }])]);
      expect(r.stderr).toBe("");
      expect(r.code).toBe(0);
      expect(r.stdout).toContain("group G-ONB-LOST: created (its answer was lost; the listing shows it)");
      expect(r.stdout).toContain("subscribers: 1 enrolled");
    } finally {
      await setFaults({});
    }
    const info = (await (await request(`${url}/_sandbox/info`)).body.json()) as { stats: { byStatus: Record<string, number> } };
    expect((info.stats.byStatus.lost ?? 0) - lostBefore).toBe(1);
    expect(await groupsNamed("G-ONB-LOST")).toHaveLength(1);
  });

  it("each documented 400 comes back as its message naming the field", async () => {
    const base = groupFile("base.json", { groupId: "G-ONB-2", adminEmail: "hr2@onboard.example.com", ein: "66-7654321" });
    expect((await cli(["groups", "create", base])).code).toBe(0);

    const email = await cli(["groups", "create", groupFile("email.json", { groupId: "G-ONB-3", adminEmail: "hr2@onboard.example.com", ein: "66-1111111" })]);
    expect(email.code).toBe(1);
    expect(email.stderr).toContain('adminEmail "hr2@onboard.example.com" is already used by another group; choose another [GROUP_TAKEN]');

    const number = await cli(["groups", "create", groupFile("number.json", { groupId: "G-ONB-2", adminEmail: "other@onboard.example.com", ein: "66-2222222" })]);
    expect(number.code).toBe(1);
    expect(number.stderr).toContain('groupId (the group number) "G-ONB-2" is already used by another group; choose another [GROUP_TAKEN]');

    const overlap = await cli(["groups", "create", groupFile("ein.json", { groupId: "G-ONB-4", adminEmail: "hr4@onboard.example.com", ein: "66-7654321", effectiveDate: "2026-06-01", terminationDate: "2027-05-31" })]);
    expect(overlap.code).toBe(1);
    expect(overlap.stderr).toContain("ein: a sponsor with this EIN already has a policy overlapping 2026-06-01 to 2027-05-31");
    expect(overlap.stderr).toContain("[EIN_OVERLAP]");
    for (const g of ["G-ONB-3", "G-ONB-4"]) expect(await groupsNamed(g)).toEqual([]);
  });

  it("unknown references are found before anything is sent: exit 2 naming the field and the value", async () => {
    for (const [field, value] of [["planDesignId", "pd-nope"], ["vendorId", "vnd-nope"], ["benefitBundleId", "bb-nope"]] as const) {
      const r = await cli(["groups", "create", groupFile(`ref-${field}.json`, { groupId: `G-REF-${field}`, adminEmail: `${field}@onboard.example.com`, [field]: value })]);
      expect(r.code).toBe(2);
      expect(r.stderr).toContain(`${field}: "${value}" is not a`);
      expect(r.stderr).toContain("nothing was sent");
      expect(await groupsNamed(`G-REF-${field}`)).toEqual([]);
    }
  });

  it("a read-only key gets the 403 advice and creates nothing", async () => {
    const r = await cli(["groups", "create", groupFile("ro.json", { groupId: "G-ONB-RO", adminEmail: "ro@onboard.example.com", ein: "55-5555555" })], { BENEFITS_API_KEY: readOnlyKey });
    expect(r.code).toBe(1);
    expect(r.stderr).toContain("POST /v2/groups answered 403");
    expect(r.stderr).toContain("The service operator must adjust your organization's permissions; a POST also needs portal permission to view what it creates");
    expect(r.stderr).not.toContain(readOnlyKey);
    expect(await groupsNamed("G-ONB-RO")).toEqual([]);
  });

  it("production asks for --yes before sending anything", async () => {
    writeFileSync(join(dir, "benefits-sync.config.json"), JSON.stringify({ environment: "production", environments: { production: url } }));
    const file = groupFile("prod.json", { groupId: "G-ONB-PROD", adminEmail: "prod@onboard.example.com", ein: "44-4444444" });
    try {
      const refused = await cli(["groups", "create", file], { BENEFITS_BASE_URL: "" });
      expect(refused.code).toBe(2);
      expect(refused.stderr).toContain("--yes: groups create writes to the production service");
      expect(await groupsNamed("G-ONB-PROD")).toEqual([]);
      const confirmed = await cli(["groups", "create", file, "--yes"], { BENEFITS_BASE_URL: "" });
      expect(confirmed.code).toBe(0);
      expect(await groupsNamed("G-ONB-PROD")).toHaveLength(1);
    } finally {
      rmSync(join(dir, "benefits-sync.config.json"));
    }
  });

  it("a bad file is refused with every problem naming the key, never quoting a person's data", async () => {
    const members = [{ ...person("Fay", "98-765"), memberId: "bad-1" }, { ...person("Gus", SSNS[0]!, "dependent"), memberId: "bad-1" }, { ...person("Hal", SSNS[1]!), dateOfBirth: "1990-02-30" }];
    const file = groupFile("bad.json", { effectiveDate: "2026-02-30", adminEmail: "not-an-email", members }, [{ self: { ...person("Eve", "12-345"), dateOfBirth: "1990-13-01" } }]);
    const r = await cli(["groups", "create", file]);
    expect(r.code).toBe(2);
    expect(r.stderr).toContain('bad.json: adminEmail: Invalid email address, got "not-an-email"');
    expect(r.stderr).toContain("bad.json: subscribers[0].self.ssn: expected an SSN of 9 digits");
    expect(r.stderr).toContain("bad.json: subscribers[0].self.dateOfBirth: not a calendar date");
    expect(r.stderr).toContain("bad.json: effectiveDate: not a calendar date");
    expect(r.stderr).toContain("bad.json: members[0].ssn: expected an SSN of 9 digits");
    expect(r.stderr).toContain("bad.json: members[1].memberId: the same memberId as members[0]; each member needs their own");
    expect(r.stderr).toContain("bad.json: members[2].memberId:");
    expect(r.stderr).toContain("bad.json: members[2].dateOfBirth: not a calendar date");
    for (const value of ["98-765", "Fay", "Gus", "Hal", "bad-1", SSNS[0]!]) expect(r.stderr).not.toContain(value);
    expect(r.stderr).not.toContain("12-345");
    expect(r.stderr).not.toContain("Eve");
  });

  it("(issue 38, census family 8) no person-field canary appears in anything printed; a bad group field is shown as documented", async () => {
    const canary = (n: number) => ({ memberId: `qzm-${n}`, firstName: `Firstqz${n}`, lastName: `Lastqz${n}`, dateOfBirth: `1962-0${n}-1${n}`, ssn: `401-66-200${n}`, memberType: n === 1 ? "employee" : "dependent", gender: `Gqz${n}`, email: `qz${n}.canary@example.org`, phone: `555 017 000${n}`, address: { line1: `${n} Canaryqz Rd`, city: `Qzville${n}`, state: "TX", zip: `8642${n}` } });
    const canaries = ["qz", "1962-0", "401-66-200", "40166200", "555 017", "8642"];
    const printed: string[] = [];
    const bad = await cli(["groups", "create", groupFile("canary-bad.json", { groupId: "G-QZ-BAD", adminEmail: "bad@onboard.example.com", ein: "12-34567", members: [{ ...canary(1), ssn: "401-66-20qz" }, { ...canary(2), dateOfBirth: "1962-02-30" }] })]);
    expect(bad.code).toBe(2);
    expect(bad.stderr).toContain('canary-bad.json: ein: expected an EIN such as 12-3456789, got "12-34567"');
    expect(bad.stderr).toContain("canary-bad.json: members[0].ssn: expected an SSN of 9 digits (11 characters, letters, digits, other characters)");
    expect(bad.stderr).toContain("canary-bad.json: members[1].dateOfBirth: not a calendar date");
    printed.push(bad.stdout, bad.stderr);
    const file = groupFile("canary.json", { groupId: "G-QZ-OK", adminEmail: "ok@onboard.example.com", ein: "31-4159265", members: [canary(1), canary(2)] });
    for (const args of [["groups", "create", file], ["groups", "create", file, "--json"]]) {
      const r = await cli(args);
      expect(r.code, r.stderr).toBe(0);
      printed.push(r.stdout, r.stderr);
    }
    expect(printed.join("\n")).toContain("G-QZ-OK");
    // The files' folder goes too: its random suffix (mkdtemp's six letters and digits) held "qz" once
    // in a clean-checkout run.
    const seen = printed.join("\n").replaceAll(dir, "").replaceAll("G-QZ-OK", "").replaceAll("G-QZ-BAD", "").toLowerCase();
    for (const c of canaries) expect(seen.includes(c), `the output holds the canary ${c}`).toBe(false);
  });
});

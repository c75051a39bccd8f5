import { existsSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { startSandbox, type MemberRec, type Sandbox } from "../../src/sandbox/index.js";
import { startCli } from "../helpers/cli-process.js";
import { writtenFiles, type Place } from "../helpers/census-ssn-scan.js";

/**
 * Issue 38's census audit: one test per message family, each a canary scan. Every cell the family
 * is about holds a text found nowhere else (a canary); `census plan` (text and --json) and `census
 * apply` (text and --json) run on the file, and the canaries are looked for in everything they
 * printed and wrote: stdout, stderr, the journal and the result files (the snapshot holds the
 * sandbox's people, and the census file is the user's: neither is scanned).
 */
let sb: Sandbox;
let dir: string;
const db = () => join(dir, "snap.db");

beforeAll(async () => {
  sb = await startSandbox({ members: 80, groups: 2, seed: 38, enrollmentDelayMs: 20 });
  dir = mkdtempSync(join(tmpdir(), "bsync-census-canaries-"));
  const synced = await startCli(["sync"], { BENEFITS_BASE_URL: sb.baseUrl, BENEFITS_API_KEY: sb.keys.full, BENEFITS_DB: db() }, dir).done;
  expect(synced.code, synced.stderr).toBe(0);
  const found = findStory();
  story = () => found;
});
afterAll(async () => {
  await sb?.close();
  rmSync(dir, { recursive: true, force: true });
});

const HEADER = "employee_id,relationship,first_name,last_name,date_of_birth,ssn,email,phone,address_line1,city,zip,plan_id,coverage_start,coverage_end";
const members = () => [...sb.iterate("members")] as MemberRec[];
/** The group with the most open subscribers with a dashed SSN, and those subscribers, as synced (before any apply). */
let story: () => ReturnType<typeof findStory>;
function findStory() {
  const open = (m: MemberRec, gp: string) => m.relationship === "self" && /^\d{3}-\d{2}-\d{4}$/.test(m.ssn) && m.coverages.some((c) => c.groupPolicyId === gp && c.endDate === null && c.status === "active");
  const groups = [...sb.iterate("groups")];
  const count = (gp: string) => members().filter((m) => open(m, gp)).length;
  const group = groups.reduce((a, b) => (count(b.id) > count(a.id) ? b : a));
  return { group, plan: group.plans[0]!.id, subs: members().filter((m) => open(m, group.id)) };
}

interface Runs {
  readonly code: Record<string, number | null>;
  readonly out: Record<string, string>;
  readonly places: Place[];
}

/** Plan and apply `csv` (text and --json), and gather what they printed and wrote. */
async function runAll(name: string, csv: string, group: string): Promise<Runs> {
  const file = join(dir, `${name}.csv`);
  writeFileSync(file, csv);
  const code: Record<string, number | null> = {};
  const out: Record<string, string> = {};
  const places: Place[] = [];
  const runs: [string, string[]][] = [
    ["plan", ["census", "plan", file, "--group", group]],
    ["plan --json", ["census", "plan", file, "--group", group, "--json"]],
    ["apply", ["census", "apply", file, "--group", group, "--result", join(dir, `${name}-apply.json`)]],
    ["apply --json", ["census", "apply", file, "--group", group, "--json", "--result", join(dir, `${name}-apply-json.json`)]],
  ];
  for (const [label, args] of runs) {
    const r = await startCli(args, { BENEFITS_BASE_URL: sb.baseUrl, BENEFITS_API_KEY: sb.keys.full, BENEFITS_DB: db() }, dir).done;
    code[label] = r.code;
    out[label] = `${r.stdout}\n${r.stderr}`;
    places.push([`${name}: ${label} stdout`, r.stdout], [`${name}: ${label} stderr`, r.stderr]);
  }
  for (const result of [`${name}-apply.json`, `${name}-apply-json.json`].map((f) => join(dir, f))) if (existsSync(result)) places.push([result, readFileSync(result, "utf8")]);
  if (existsSync(`${db()}.census`)) places.push(...writtenFiles(`${db()}.census`, []));
  return { code, out, places };
}

/** Fail naming the place and the canary, in any case. */
function expectNoCanary(places: readonly Place[], canaries: readonly string[]): void {
  expect(places.length).toBeGreaterThan(0);
  for (const [where, content] of places) for (const c of canaries) expect(content.toLowerCase().includes(c.toLowerCase()), `${where} holds the canary ${c}`).toBe(false);
}

describe("census messages never print a cell: a canary per family (issue 38)", () => {
  it("(1) a file without its header row, its first row an SSN, a name and a date: plan and apply refuse it, none of the row shown", async () => {
    const { group, plan } = story();
    const r = await runAll("headerless", `611223334,self,Nadiaqz,Okaforqz,1991-03-04,900-10-0002,,,,,,${plan},,\n`, group.id);
    expect(Object.values(r.code)).toEqual([2, 2, 2, 2]);
    for (const label of Object.keys(r.out)) expect(r.out[label], label).toContain("the first row is not a header (none of its 14 cells names a column)");
    expectNoCanary(r.places, ["611223334", "900-10-0002", "900100002", "Nadiaqz", "Okaforqz", "1991-03-04"]);
  });

  it("(2) a header typo: the suggestion is shown, the header's text is not", async () => {
    const { group } = story();
    const r = await runAll("typo", `${HEADER.replace("first_name", "frist_name").replace("city", "Cityqzx")}\nE1,self,Ann,Lee,1980-01-01,900-20-0001,,,,,,,,\n`, group.id);
    expect(Object.values(r.code)).toEqual([2, 2, 2, 2]);
    for (const label of Object.keys(r.out)) expect(r.out[label], label).toMatch(/header, column 3: not a column of the layout \(10 characters, letters, other characters\); did you mean first_name\?/);
    expectNoCanary(r.places, ["frist", "Cityqzx"]);
  });

  it("(3) every cell problem, one canary per column: described by line, column and shape, never quoted", async () => {
    const { group } = story();
    const rows = [
      "QZ31,cousinqz,Relqz,Rowqz,1980-01-01,900-31-0001,,,,,,,,", // relationship
      "QZ32,self,Dobqz,Rowqz,1977-02-30,900-32-0001,,,,,,,,", // date_of_birth
      "QZ33,self,Ssnqz,Rowqz,1980-01-01,98-7654-321,,,,,,,,", // ssn
      "QZ34,self,Mailqz,Rowqz,1980-01-01,900-34-0001,qz.canary@@example,,,,,,,", // email
      "QZ35,self,Zipqz,Rowqz,1980-01-01,900-35-0001,,,,,6270Q,,,", // zip
      "QZ36,self,Startqz,Rowqz,1980-01-01,900-36-0001,,,,,,,2031-13-45,", // coverage_start
      "QZ37,self,Endqz,Rowqz,1980-01-01,900-37-0001,,,,,,,,2030-02-31", // coverage_end
      "QZ38,self,Orderqz,Rowqz,1980-01-01,900-38-0001,,,,,,,2029-05-05,2029-04-04", // coverage_end before coverage_start
      ",self,Emptyqz,Rowqz,1980-01-01,900-39-0001,,,,,,,,", // employee_id
      "QZ40,self,Shortqz,Rowqz,1980-01-01,900-40-0001", // too few cells
    ];
    const r = await runAll("cells", `${HEADER}\n${rows.join("\n")}\n`, group.id);
    expect([r.code["plan"], r.code["apply"]]).toEqual([0, 2]);
    const fields = JSON.parse(r.out["plan --json"]!.split("\n").filter((l) => l.startsWith("{")).pop()!).problems.map((p: { line: number; field: string }) => `${p.line} ${p.field}`);
    expect(fields).toEqual(["2 relationship", "3 date_of_birth", "4 ssn", "5 email", "6 zip", "7 coverage_start", "8 coverage_end", "9 coverage_end", "10 employee_id", "11 (row)"]);
    expectNoCanary(r.places, ["cousinqz", "1977-02-30", "98-7654-321", "qz.canary", "6270Q", "2031-13-45", "2030-02-31", "2029-05-05", "2029-04-04", "QZ3", "QZ40", "Rowqz", "Relqz", "Dobqz", "Ssnqz", "Mailqz", "Zipqz", "Startqz", "Endqz", "Orderqz", "Emptyqz", "Shortqz"]);
  });

  it("(4) problems between rows (a second self, a dependent without its self, a second spouse) never name the employee_id 611223334", async () => {
    const { group } = story();
    const rows = [
      "611223334,self,Firstqz,Crossqz,1980-01-01,900-41-0001,,,,,,,,",
      "611223334,self,Secondqz,Crossqz,1981-01-01,900-41-0002,,,,,,,,",
      "611223334,spouse,Spouseqz,Crossqz,1982-01-01,900-41-0003,,,,,,,,",
      "611223334,spouse,Otherqz,Crossqz,1983-01-01,900-41-0004,,,,,,,,",
      "622334455,child,Orphanqz,Crossqz,2015-01-01,900-41-0005,,,,,,,,",
    ];
    const r = await runAll("cross", `${HEADER}\n${rows.join("\n")}\n`, group.id);
    expect([r.code["plan"], r.code["apply"]]).toEqual([0, 2]);
    expect(r.out["plan"]).toContain("line 3, relationship: a second subscriber (self) for the employee_id of line 2");
    expect(r.out["plan"]).toContain("line 5, relationship: a second spouse for the employee_id of line 4");
    expect(r.out["plan"]).toContain("line 6, employee_id: no subscriber row (relationship self) has this row's employee_id");
    expectNoCanary(r.places, ["611223334", "622334455", "Secondqz", "Otherqz", "Orphanqz", "1981-01-01", "1983-01-01", "2015-01-01"]);
  });

  it("(5) plan reasons (an unknown plan_id, a dependent's other plan, a refused plan change) never show an SSN-shaped plan_id", async () => {
    const { group, plan, subs } = story();
    const m = subs[0]!;
    const rows = [
      "QZ51,self,Unknownqz,Planqz,1980-01-01,900-51-0001,,,,,,900100003,,", // not a plan of the group
      `QZ52,self,Keptqz,Planqz,1980-01-01,900-52-0001,,,,,,${plan},,`, // a new subscriber...
      "QZ52,child,Childqz,Planqz,2016-01-01,900-52-0002,,,,,,900100004,,", // ...whose child names another plan
      `${m.subscriberId},self,${m.firstName},${m.lastName},${m.dateOfBirth},${m.ssn},,,,,,900100005,,`, // a plan change, refused
    ];
    const r = await runAll("reasons", `${HEADER}\n${rows.join("\n")}\n`, group.id);
    expect([r.code["plan"], r.code["apply"]]).toEqual([0, 0]);
    expect(r.out["plan"]).toContain("line 2: its plan_id (9 characters, digits only) is not a plan of the group");
    expect(r.out["plan"]).toContain(`line 4: a dependent joins its subscriber's plan (${plan}, line 3), not the row's plan_id (9 characters, digits only)`);
    expect(r.out["plan"]).toContain(`line 5: member ${m.id}: plan ${m.coverages.find((c) => c.groupPolicyId === group.id)!.planId} to the row's plan_id (9 characters, digits only)`);
    expectNoCanary(r.places, ["900100003", "900100004", "900100005", "QZ51", "QZ52"]);
  });

  it("(6) the plan's adds, as text and --json, name new people by line, none of their cells", async () => {
    const { group, plan } = story();
    const rows = [
      `633445566,self,Addfirstqz,Addlastqz,1961-06-17,900-61-0001,add.canary@example.org,+1 555 014 7788,17 Canaryquay Rd,Canaryville,97531-2468,${plan},2026-01-01,`,
      "633445566,spouse,Addspouseqz,Addlastqz,1962-07-18,900-61-0002,,,,,,,,",
    ];
    const r = await runAll("adds", `${HEADER}\n${rows.join("\n")}\n`, group.id);
    expect(r.code["plan"]).toBe(0);
    expect(r.out["plan"]).toContain(`line 2, plan ${plan}, with the dependents on line 3`);
    const planOnly = r.places.filter(([where]) => where.includes(": plan"));
    expectNoCanary(planOnly, ["633445566", "Addfirstqz", "Addlastqz", "Addspouseqz", "1961-06-17", "1962-07-18", "add.canary", "555 014 7788", "Canaryquay", "Canaryville", "97531-2468"]);
  });

  it("(7) the result file and the journal hold no employee_id, name, date of birth or contact cell: bodies are described", async () => {
    const { group, plan, subs } = story();
    const m = subs[1]!;
    const rows = [
      `644556677,self,Sentfirstqz,Sentlastqz,1963-08-19,900-71-0001,sent.canary@example.org,+1 555 019 3344,23 Sentquay Rd,Sentville,86420-1357,${plan},,`,
      "644556677,child,Sentchildqz,Sentlastqz,2017-09-20,900-71-0002,,,,,,,,",
      `${m.subscriberId},self,${m.firstName},${m.lastName},${m.dateOfBirth},${m.ssn},patch.canary@example.org,,41 Patchquay Rd,,,,,`,
    ];
    const r = await runAll("sent", `${HEADER}\n${rows.join("\n")}\n`, group.id);
    expect([r.code["apply"], r.code["apply --json"]]).toEqual([0, 0]);
    const result = r.places.find(([where]) => where.endsWith("sent-apply.json"));
    expect(result, "the first apply's result file").toBeDefined();
    expectNoCanary(r.places, ["644556677", "Sentfirstqz", "Sentlastqz", "Sentchildqz", "1963-08-19", "2017-09-20", "sent.canary", "555 019 3344", "Sentquay", "Sentville", "86420-1357", "patch.canary", "Patchquay", "900-71-000", "90071000"]);
    const doc = JSON.parse(result![1]) as { requests: { kind: string; body: Record<string, unknown> }[] };
    expect(doc.requests.map((q) => q.kind).sort()).toEqual(["add-subscriber", "patch-member"]);
    const add = doc.requests.find((q) => q.kind === "add-subscriber")!.body as { subscribers: { plan: string; self: Record<string, unknown> }[] };
    expect(add.subscribers[0]!.plan).toBe(plan);
    expect(add.subscribers[0]!.self).toMatchObject({ firstName: "(11 characters, letters only)", dateOfBirth: "(10 characters, digits, other characters)", ssn_last4: "0001", relationship: "self" });
    expect(r.places.some(([where]) => where.endsWith(".journal.jsonl"))).toBe(true);
  });
});

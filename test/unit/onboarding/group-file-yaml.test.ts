/**
 * `groups create` reads a YAML group file as it reads JSON: the same content gives the same group
 * and households; YAML's traps are refused with the key named (a repeated key, an unquoted SSN or
 * zip that YAML reads as a number), and no problem quotes a person's value (the parser's own
 * messages quote the source line, which may hold an SSN).
 */
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, describe, expect, it } from "vitest";
import { ConfigError } from "../../../src/errors.js";
import { readGroupFile } from "../../../src/onboarding/group-file.js";

const dir = mkdtempSync(join(tmpdir(), "bsync-group-yaml-"));
afterAll(() => rmSync(dir, { recursive: true, force: true }));

const SSN_A = "123-45-6789";
const SSN_B = "123-45-6790";
const group = {
  groupId: "G-2027-ACME",
  adminEmail: "hr@acme.example.com",
  sponsorName: "Acme Inc",
  ein: "12-3456789",
  planDesignId: "pd_1",
  benefitBundleId: "bb_1",
  vendorId: "vnd_1",
  effectiveDate: "2027-01-01",
  terminationDate: "2027-12-31",
  subscribers: [
    {
      self: { firstName: "Ada", lastName: "Roe", dateOfBirth: "1984-03-09", ssn: SSN_A, memberType: "employee", address: { line1: "1 Main St", city: "Austin", state: "TX", zip: "01234" } },
      spouse: { firstName: "Bo", lastName: "Roe", dateOfBirth: "1985-01-02", ssn: SSN_B, memberType: "dependent" },
      children: [],
    },
  ],
};

// Written by hand, as a user would: dates and the EIN unquoted, the SSNs and the zip quoted.
const YAML_TEXT = `# Acme's 2027 group
groupId: G-2027-ACME
adminEmail: hr@acme.example.com
sponsorName: Acme Inc
ein: 12-3456789
planDesignId: pd_1
benefitBundleId: bb_1
vendorId: vnd_1
effectiveDate: 2027-01-01
terminationDate: 2027-12-31
subscribers:
  - self:
      firstName: Ada
      lastName: Roe
      dateOfBirth: 1984-03-09
      ssn: "${SSN_A}"
      memberType: employee
      address: { line1: 1 Main St, city: Austin, state: TX, zip: "01234" }
    spouse: { firstName: Bo, lastName: Roe, dateOfBirth: 1985-01-02, ssn: "${SSN_B}", memberType: dependent }
    children: []
`;

const write = (name: string, text: string) => {
  const f = join(dir, name);
  writeFileSync(f, text);
  return f;
};
const problemsOf = (file: string): string[] => {
  try {
    readGroupFile(file, file);
  } catch (e) {
    if (e instanceof ConfigError) return [...e.problems];
    throw e;
  }
  return [];
};

describe("a YAML group file", () => {
  it("reads as the same group and households as the JSON file with the same content (.yaml and .yml)", () => {
    const fromJson = readGroupFile(write("acme.json", JSON.stringify(group)), "acme.json");
    expect(readGroupFile(write("acme.yaml", YAML_TEXT), "acme.yaml")).toEqual(fromJson);
    expect(readGroupFile(write("acme.yml", YAML_TEXT), "acme.yml")).toEqual(fromJson);
    expect(fromJson.subscribers[0]!.self.ssn).toBe(SSN_A);
  });

  it("a key given twice is refused, with the line and column", () => {
    const problems = problemsOf(write("twice.yaml", YAML_TEXT.replace("vendorId: vnd_1\n", "vendorId: vnd_1\nvendorId: vnd_2\n")));
    expect(problems).toEqual([expect.stringMatching(/twice\.yaml: not valid YAML at line 9, column 1 \(a key given twice\)/)]);
  });

  it("a syntax error on a person's line names the line, never the SSN on it", () => {
    const broken = YAML_TEXT.replace(`ssn: "${SSN_A}"`, `ssn: "${SSN_A}`);
    const problems = problemsOf(write("broken.yaml", broken));
    expect(problems).toHaveLength(1);
    expect(problems[0]).toMatch(/^.*broken\.yaml: not valid YAML at line \d+, column \d+ \(.+\)$/);
    expect(problems.join("\n")).not.toContain("45-67");
  });

  it("an unquoted SSN and zip (YAML reads them as numbers) are refused by key, their values not quoted", () => {
    const unquoted = YAML_TEXT.replace(`ssn: "${SSN_A}"`, "ssn: 123456789").replace('zip: "01234"', "zip: 01234");
    const problems = problemsOf(write("unquoted.yaml", unquoted));
    expect(problems).toContainEqual(expect.stringMatching(/unquoted\.yaml: subscribers\[0\]\.self\.ssn: .*received number; in YAML, put it in quotes$/));
    expect(problems).toContainEqual(expect.stringMatching(/unquoted\.yaml: subscribers\[0\]\.self\.address\.zip: .*received number; in YAML, put it in quotes$/));
    expect(problems.join("\n")).not.toMatch(/123456789|1234\b/);
  });

  it("a list or a scalar at the top is refused, saying what was found", () => {
    expect(problemsOf(write("list.yaml", "- a\n- b\n"))).toEqual([expect.stringContaining("list.yaml: expected a mapping of the group's keys, got a list")]);
    expect(problemsOf(write("empty.yml", ""))).toEqual([expect.stringContaining("empty.yml: expected a mapping of the group's keys, got nothing")]);
  });
});

describe("the group file shown in docs/groups-create.md", () => {
  it("reads as printed: its members in order with their memberIds, the group body without them", () => {
    const doc = readFileSync(join(import.meta.dirname, "../../../docs/groups-create.md"), "utf8");
    const block = /```json\n([\s\S]*?)\n```/.exec(doc)?.[1];
    expect(block).toBeDefined();
    const file = join(dir, "from-docs.json");
    writeFileSync(file, block!);
    const read = readGroupFile(file, "from-docs.json");
    expect(read.members.map((m) => [m.memberId, m.memberType])).toEqual([
      ["acme-0001", "employee"],
      ["acme-0002", "dependent"],
    ]);
    expect(read.subscribers).toEqual([]);
    expect(Object.keys(read.group)).not.toContain("members");
  });
});

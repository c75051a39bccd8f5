/**
 * What `groups create` shows of its file (issue 38): the group's fields as given, a person's values
 * never, only their key path and, for a text, its shape (docs/groups-create.md, shown-fields.ts).
 */
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, describe, expect, it } from "vitest";
import { ConfigError } from "../../../src/errors.js";
import { readGroupFile } from "../../../src/onboarding/group-file.js";
import { SHOWN_GROUP_FIELDS } from "../../../src/onboarding/shown-fields.js";

const dir = mkdtempSync(join(tmpdir(), "bsync-group-shown-"));
afterAll(() => rmSync(dir, { recursive: true, force: true }));

function problemsOf(content: unknown): string[] {
  const file = join(dir, "g.json");
  writeFileSync(file, JSON.stringify(content));
  try {
    readGroupFile(file, "g.json");
  } catch (e) {
    if (e instanceof ConfigError) return [...e.problems];
    throw e;
  }
  return [];
}

const person = { firstName: "Adaqz", lastName: "Roeqz", dateOfBirth: "1984-03-09", ssn: "401-55-1001", memberType: "employee", email: "ada.qz@example.org", phone: "555 012 3456", address: { line1: "1 Mainqz St", city: "Austinqz", state: "TX", zip: "01234" } };

describe("what a groups create problem shows", () => {
  it("a bad group field as given, a bad person's field by its key and shape, never its text", () => {
    const problems = problemsOf({
      groupId: "G-1",
      adminEmail: "not-an-email",
      sponsorName: "Acme",
      ein: "12-34567",
      planDesignId: "pd",
      benefitBundleId: "bb",
      vendorId: "vnd",
      effectiveDate: "2027-01-01",
      terminationDate: "2027-12-31",
      members: [{ ...person, ssn: "98-765qz", memberId: "acme-qz-1", dateOfBirth: 19840309 }, "Bo Roeqz 401-55-1002"],
      subscribers: [{ self: { ...person, firstName: "", memberType: "" } }],
    });
    expect(problems).toEqual(
      expect.arrayContaining([
        'g.json: adminEmail: Invalid email address, got "not-an-email"',
        'g.json: ein: expected an EIN such as 12-3456789, got "12-34567"',
        "g.json: members[0].ssn: expected an SSN of 9 digits (8 characters, letters, digits, other characters)",
        expect.stringMatching(/^g\.json: members\[0\]\.dateOfBirth: Invalid input: expected string, received number$/),
        expect.stringMatching(/^g\.json: members\[1\]: Invalid input: expected object, received string \(20 characters, letters, digits, spaces, other characters\)$/),
        expect.stringMatching(/^g\.json: subscribers\[0\]\.self\.firstName: .* \(empty\)$/),
      ]),
    );
    expect(problems.join("\n")).not.toMatch(/qz|401-55|1002|19840309|555 012|01234/i);
  });

  it("the one list names exactly the nine group fields, and docs/groups-create.md lists the same", () => {
    expect(Object.keys(SHOWN_GROUP_FIELDS).sort()).toEqual(["adminEmail", "benefitBundleId", "effectiveDate", "ein", "groupId", "planDesignId", "sponsorName", "terminationDate", "vendorId"]);
    const doc = readFileSync(new URL("../../../docs/groups-create.md", import.meta.url), "utf8");
    const section = doc.slice(doc.indexOf("## What is shown"));
    const listed = [...section.matchAll(/^- (.*?):/gm)].flatMap((m) => [...m[1]!.matchAll(/`(\w+)`/g)].map((k) => k[1])).sort();
    expect(listed).toEqual(Object.keys(SHOWN_GROUP_FIELDS).sort());
  });
});

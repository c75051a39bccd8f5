import { describe, expect, it } from "vitest";
import { planCensus } from "../../../src/eligibility/census-plan.js";
import { planJson, planText } from "../../../src/eligibility/plan-render.js";
import type { GroupMember, GroupView } from "../../../src/eligibility/group-people.js";
import { readCensus } from "../../../src/eligibility/read-census.js";
// The expected token is worked out in the test (node:crypto), never by the product's own rule.
import { expectedSsnToken as ssnToken } from "../../helpers/ssn-oracle.js";

const KEY = Buffer.alloc(32, 3);
const HEADER = "employee_id,relationship,first_name,last_name,date_of_birth,ssn,plan_id,coverage_end,email";

function member(id: string, first: string, last: string, dob: string, ssn: string, planId = "P1"): GroupMember {
  return {
    memberId: id,
    firstName: first,
    lastName: last,
    dateOfBirth: dob,
    ssnToken: ssnToken(ssn.replace(/\D/g, ""), KEY),
    gender: "F",
    email: null,
    phone: null,
    address: { line1: null, line2: null, city: null, state: null, zip: null },
    coverage: { id: `cov-${id}`, planId, subscriberCoverageId: `cov-${id}`, startDate: "2025-01-01", endDate: null, status: "active" },
  };
}

const view: GroupView = {
  groupPolicyId: "gp1",
  groupNumber: "G-1",
  plans: ["P1", "P2"],
  members: [member("m1", "Ann", "Lee", "1980-01-01", "111-11-1111"), member("m2", "Bo", "Ray", "1981-02-02", "222-22-2222"), member("m3", "Cy", "Fox", "1982-03-03", "333-33-3333")],
};

const plan = (rows: string[]) => planCensus(readCensus(`${HEADER}\n${rows.join("\n")}\n`, "c.csv", KEY), view);

describe("planning a census against a group", () => {
  it("refuses a member's plan change with the spec's reason, and still plans the row's other changes", () => {
    const p = plan(["E1,self,Ann,Lee,1980-01-01,111-11-1111,P2,,ann@example.com"]);
    expect(p.refused).toEqual([{ line: 2, memberId: "m1", reason: expect.stringMatching(/plan P1 to P2: a member changing plans cannot be done through the API: only plan changes started by the service operator are supported; notify the service operator/) }]);
    expect(p.updates).toEqual([{ line: 2, memberId: "m1", fields: ["email"], body: { email: "ann@example.com" } }]);
    expect(p.addSubscribers).toEqual([]);
  });

  it("matches by SSN token with the name or the birth date, and reports rows whose evidence disagrees", () => {
    const p = plan([
      "E1,self,Ann,Smith,1980-01-01,111111111,,,", // married: same SSN and birth date, new last name
      "E2,self,Bo,Ray,1981-12-02,222-22-2222,,,", // birth date corrected
      "E3,self,Zed,Zee,1999-09-09,333-33-3333,,,", // C's SSN, nothing else
      "E4,self,Cy,Fox,1982-03-03,444-44-4444,,,", // C's name and birth, another SSN
      "E5,self,New,Hire,1990-01-01,555-55-5555,,,", // new, but the group has two plans
    ]);
    expect(p.updates.map((u) => [u.line, u.fields])).toEqual([
      [2, ["lastName"]],
      [3, ["dateOfBirth"]],
    ]);
    expect(p.unmatched.map((u) => u.line)).toEqual([4, 5, 6]);
    expect(p.unmatched[0]!.reason).toContain("neither the name nor the date of birth");
    expect(p.unmatched[1]!.reason).toContain("another SSN");
    expect(p.unmatched[2]!.reason).toContain("give plan_id");
    expect(p.membersNotInFile).toBe(1);
  });

  it("puts a new subscriber's dependents in the same entry, and a dependent of an unmatched subscriber nowhere", () => {
    const p = plan([
      "E6,self,Dee,New,1990-01-01,666-66-6666,P2,,",
      "E6,child,Eli,New,2019-01-01,666-66-6667,,,",
      "E7,self,Zed,Zee,1999-09-09,333-33-3333,,,",
      "E7,spouse,Fay,Zee,1998-01-01,777-77-7777,,,",
      "E8,self,Bo,Ray,1981-02-02,222-22-2222,,2026-02-28,",
      "E8,spouse,Gil,Ray,1980-01-01,888-88-8888,,,",
    ]);
    expect(p.addSubscribers).toEqual([{ line: 2, plan: "P2", dependents: [3] }]);
    expect(p.addDependents).toEqual([{ line: 7, plan: "P1", subscriberMemberId: "m2", subscriberCoverageId: "cov-m2" }]);
    expect(p.terminations).toEqual([{ line: 6, memberId: "m2", coverageId: "cov-m2", terminationDate: "2026-02-28", currentEndDate: null }]);
    expect(p.unmatched.map((u) => [u.line, u.reason.slice(0, 30)])).toEqual([
      [4, "the SSN is member m3's, but ne"],
      [5, "its subscriber's row (line 4) "],
    ]);
    expect(p.membersNotInFile).toBe(2);
  });

  it("never shows an employee_id or a plan_id cell that is not one of the group's plans: rows are named by line (issue 38)", () => {
    // Both look like SSNs, as they often are: neither may reach the plan, its text or its JSON.
    const p = plan([
      "611223334,self,Dee,New,1990-01-01,666-66-6666,P2,,",
      "611223334,child,Eli,New,2019-01-01,666-66-6667,900100002,,",
      "622334455,self,Fay,Ng,1991-01-01,677-66-6666,900100003,,",
      "E8,self,Bo,Ray,1981-02-02,222-22-2222,900100004,,",
      "633445566,self,Ann,Lee,1980-01-01,111-11-1111,,,",
      "633445566,spouse,Gil,Lee,1980-01-01,688-88-8888,900100005,,",
    ]);
    const shown = `${JSON.stringify(planJson(p))}\n${planText(p, "c.csv")}`;
    expect(shown).not.toMatch(/611223334|622334455|633445566|9001000/);
    expect(p.addSubscribers).toEqual([{ line: 2, plan: "P2", dependents: [] }]);
    expect(p.unmatched.map((u) => [u.line, u.reason])).toEqual([
      [3, "a dependent joins its subscriber's plan (P2, line 2), not the row's plan_id (9 characters, digits only)"],
      [4, "its plan_id (9 characters, digits only) is not a plan of the group (its plans: P1, P2)"],
      [7, "a dependent joins its subscriber's plan (P1), not the row's plan_id (9 characters, digits only)"],
    ]);
    expect(p.refused.map((r) => r.reason.slice(0, 60))).toEqual(["plan P1 to the row's plan_id (9 characters, digits only): a "]);
  });
});

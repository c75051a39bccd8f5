import { describe, expect, it } from "vitest";
import { readCensus } from "../../../src/eligibility/read-census.js";
import { dependentBody, shownBody, subscriberEntry } from "../../../src/eligibility/write-bodies.js";
// The expected token is worked out in the test (node:crypto), never by the product's own rule.
import { expectedSsnToken } from "../../helpers/ssn-oracle.js";

const KEY = Buffer.alloc(32, 5);
const HEADER = "employee_id,relationship,first_name,last_name,date_of_birth,ssn,gender,email,phone,address_line1,address_line2,city,state,zip";

describe("a write's body as the result file shows it (issue 38)", () => {
  it("describes every cell of a person by its shape, keeps the plan, the fixed words and the SSN's last four and token", () => {
    const census = readCensus(
      `${HEADER}\n611223334,self,Nadiaqz,Okaforqz,1991-03-04,900-10-0002,Fqz,nadia.qz@example.org,+1 555 010 2233,5 Elmqz St,Apt 9qz,Springqz,ILQ,62701-1234\n611223334,child,Nicoqz,Okaforqz,2020-07-08,900-10-0004,,,,,,,,\n`,
      "c.csv",
      KEY,
    );
    const rowAt = (line: number) => census.rows.byLine(line)!;
    const add = shownBody({ subscribers: [subscriberEntry({ line: 2, plan: "P1", dependents: [3] }, rowAt)] }, KEY);
    const dependent = shownBody(dependentBody({ line: 3, plan: "P1", subscriberMemberId: "m1", subscriberCoverageId: "c1" }, rowAt), KEY);
    const patch = shownBody({ firstName: "Nadiaqz", address: { line1: "5 Elmqz St" } }, KEY);
    const terminate = shownBody({ memberId: "m1", coverageId: "c1", terminationDate: "2026-03-31" }, KEY);
    expect(add).toEqual({
      subscribers: [
        {
          plan: "P1",
          self: {
            firstName: "(7 characters, letters only)",
            lastName: "(8 characters, letters only)",
            dateOfBirth: "(10 characters, digits, other characters)",
            ssn_last4: "0002",
            ssn_token: expectedSsnToken("900100002", KEY),
            memberType: "employee",
            relationship: "self",
            gender: "(3 characters, letters only)",
            email: "(20 characters, letters, other characters)",
            phone: "(15 characters, digits, spaces, other characters)",
            address: { line1: "(10 characters, letters, digits, spaces)", line2: "(7 characters, letters, digits, spaces)", city: "(8 characters, letters only)", state: "(3 characters, letters only)", zip: "(10 characters, digits, other characters)" },
          },
          children: [expect.objectContaining({ firstName: "(6 characters, letters only)", ssn_last4: "0004", relationship: "child" })],
        },
      ],
    });
    expect(dependent).toMatchObject({ plan: "P1", dependent: { firstName: "(6 characters, letters only)", memberType: "dependent" } });
    expect(patch).toEqual({ firstName: "(7 characters, letters only)", address: { line1: "(10 characters, letters, digits, spaces)" } });
    expect(terminate).toEqual({ memberId: "m1", coverageId: "c1", terminationDate: "2026-03-31" });
    expect(JSON.stringify([add, dependent, patch])).not.toMatch(/qz|1991-03-04|2020-07-08|555|62701|611223334|900-10|90010000/i);
  });
});

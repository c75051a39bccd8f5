import { readFileSync } from "node:fs";
import { describe, expect, it } from "vitest";
import { CENSUS_COLUMNS } from "../../../src/eligibility/census-row.js";
import { CensusFileError, readCensus } from "../../../src/eligibility/read-census.js";
// The expected token is worked out in the test (node:crypto), never by the product's own rule.
import { expectedSsnToken as ssnToken } from "../../helpers/ssn-oracle.js";

const KEY = Buffer.alloc(32, 7);
const HEADER = "employee_id,relationship,first_name,last_name,date_of_birth,ssn,city,coverage_end";

describe("reading a census file", () => {
  it("reads one person per row, with the snapshot's SSN token and no plain SSN but the digits kept in memory", () => {
    const text = `${HEADER}\nE1,employee,Ann,Lee,1980-02-03,123-45-6789,"Austin, TX",\nE1,child,Bo,Lee,2015-06-07,123456780,,2026-03-31\n`;
    const { problems, ...census } = readCensus(text, "c.csv", KEY);
    const rows = census.rows.toArray();
    expect(problems).toEqual([]);
    expect(rows.map((r) => [r.line, r.relationship, r.first_name, r.city, r.coverage_end])).toEqual([
      [2, "self", "Ann", "Austin, TX", undefined],
      [3, "child", "Bo", undefined, "2026-03-31"],
    ]);
    expect(rows[0]!.ssnToken).toBe(ssnToken("123456789", KEY));
    expect(rows[0]!.ssnLast4).toBe("6789");
  });

  it("names the line and the column of each bad cell, and never quotes the value", () => {
    const text = [
      HEADER,
      "E1,self,Ann,Lee,1980-02-30,123-45-6789,,",
      'E2,self,"Cy\nDee",Lee,1981-01-01,12-345-678,,',
      "E2,cousin,Di,Lee,1982-01-01,111-22-3333,,",
      "E3,self,Ed,Fox,1970-01-01,222-33-4444,,2026-01-01",
      "E3,self,Eve,Fox,1971-01-01,222-33-5555,,",
      "E9,child,Flo,Fox,2010-01-01,222-33-6666,,",
      "E4,self,Gus,Ray,1975-05-05,222-33-4444,,",
    ].join("\n");
    const { problems, ...census } = readCensus(text, "c.csv", KEY);
    const rows = census.rows.toArray();
    expect(problems.map((p) => `${p.line} ${p.field}`)).toEqual([
      "2 date_of_birth",
      "3 ssn",
      "5 relationship",
      "7 relationship",
      "8 employee_id",
      "9 ssn",
    ]);
    expect(problems.find((p) => p.line === 9)!.message).toContain("line 6");
    expect(JSON.stringify(problems)).not.toMatch(/345|1980-02-30|cousin/);
    expect(rows.map((r) => r.line)).toEqual([6]);
  });

  it("refuses a header it cannot use, naming each column", () => {
    const bad = () => readCensus("employee_id,relationship,first_name,last_name,date_of_birth,social\n", "c.csv", KEY);
    expect(bad).toThrow(CensusFileError);
    expect(bad).toThrow(/header, column 6: not a column of the layout \(6 characters, letters only\); expected one of employee_id, /);
    expect(bad).not.toThrow(/social/);
    expect(bad).toThrow(/required column ssn is missing/);
    expect(() => readCensus(`${HEADER}\nE1,self,"Ann,Lee\n`, "c.csv", KEY)).toThrow(/line 2: a quoted cell is never closed/);
  });

  it("answers a header typo with the column it is nearest to, and never its text (issue 38)", () => {
    const typo = () => readCensus("employee_id,relationship,frist_name,last_name,date_of_birth,ssn,Zanzibarqz\n", "c.csv", KEY);
    expect(typo).toThrow(/header, column 3: not a column of the layout \(10 characters, letters, other characters\); did you mean first_name\?/);
    expect(typo).toThrow(/header, column 7: not a column of the layout \(10 characters, letters only\); expected one of employee_id, /);
    expect(typo).not.toThrow(/frist|zanzibar/i);
  });

  it("says a file without its header row is one, without a word of its first row (issue 38)", () => {
    const headerless = () => readCensus("900-10-0002,self,nadia,Lee,1991-03-04,900-10-0002\n", "c.csv", KEY);
    expect(headerless).toThrow(/the first row is not a header \(none of its 6 cells names a column\): a census starts with its header row/);
    const message = (() => {
      try {
        headerless();
      } catch (e) {
        return (e as Error).message;
      }
      return "";
    })();
    expect(message).not.toMatch(/900|nadia|1991|Lee/i);
  });

  it("names the rows between rows by their lines, never by the employee_id (often an SSN) (issue 38)", () => {
    const text = [HEADER, "611223334,self,Ann,Lee,1980-02-03,123-45-6789,,", "611223334,self,Bo,Lee,1981-02-03,123-45-6780,,", "611223334,spouse,Cy,Lee,1982-02-03,123-45-6781,,", "611223334,spouse,Di,Lee,1983-02-03,123-45-6782,,", "622334455,child,Ed,Lee,2015-02-03,123-45-6783,,"].join("\n");
    const { problems } = readCensus(text, "c.csv", KEY);
    expect(problems.map((p) => `${p.line} ${p.field}: ${p.message}`)).toEqual([
      "3 relationship: a second subscriber (self) for the employee_id of line 2",
      "5 relationship: a second spouse for the employee_id of line 4",
      "6 employee_id: no subscriber row (relationship self) has this row's employee_id: a dependent's row carries its subscriber's employee_id",
    ]);
  });

  it("documents exactly the columns it reads (docs/census.md)", () => {
    const doc = readFileSync(new URL("../../../docs/census.md", import.meta.url), "utf8");
    const documented = [...doc.matchAll(/^\| `([a-z_0-9]+)` \|/gm)].map((m) => m[1]);
    expect(documented).toEqual(CENSUS_COLUMNS.map((c) => c.name));
  });
});

describe("the CSV split fed in pieces", () => {
  it("gives the same records whatever the pieces, a doubled quote, a quoted line break or a CRLF straddling two", async () => {
    const { CsvParser, csvRecords } = await import("../../../src/eligibility/csv-records.js");
    const text = '\ufeffa,b,c\r\n"x ""q"", y","line\r\nbreak",3\r\n\r\n"",z,"a""b"\n"q"tail,,\r\nlast,1,2';
    const whole = csvRecords(text).records;
    expect(whole).toHaveLength(5);
    for (const size of [1, 2, 3, 5, 7]) {
      const got: unknown[] = [];
      const p = new CsvParser((r) => got.push(r));
      for (let i = 0; i < text.length; i += size) p.push(text.slice(i, i + size));
      expect(p.end()).toEqual({});
      expect(got, `pieces of ${size}`).toEqual(whole);
    }
  });
});

/**
 * The census layout: its columns (the one list docs/census.md describes and a test holds it to) and
 * the zod schema of one row. A row is one person; `employee_id` ties dependents to their subscriber.
 * Messages never quote a cell's value: the file holds SSNs, and a misplaced SSN can sit in any cell.
 */
import { z } from "zod";
import { asDate } from "../sinks/typed-fields.js";

/** Every column of the layout, in the documented order; `required` ones must be in the header. */
export const CENSUS_COLUMNS = [
  { name: "employee_id", required: true },
  { name: "relationship", required: true },
  { name: "first_name", required: true },
  { name: "last_name", required: true },
  { name: "date_of_birth", required: true },
  { name: "ssn", required: true },
  { name: "gender", required: false },
  { name: "email", required: false },
  { name: "phone", required: false },
  { name: "address_line1", required: false },
  { name: "address_line2", required: false },
  { name: "city", required: false },
  { name: "state", required: false },
  { name: "zip", required: false },
  { name: "plan_id", required: false },
  { name: "coverage_start", required: false },
  { name: "coverage_end", required: false },
] as const;
export type CensusColumn = (typeof CENSUS_COLUMNS)[number]["name"];

export const Relationships = ["self", "spouse", "child"] as const;
export type Relationship = (typeof Relationships)[number];
/** What HR exports call the subscriber. */
const RELATIONSHIP_ALIASES: Record<string, Relationship> = { self: "self", employee: "self", subscriber: "self", spouse: "spouse", child: "child" };

const text = (what: string) => z.string().trim().min(1, { error: `expected ${what}` });
/** An empty cell means "not given": the service's value is left as it is. */
const optional = z
  .string()
  .trim()
  .transform((s) => (s === "" ? undefined : s));
const day = (what: string) => z.string().trim().refine((s) => asDate(s) !== null, { error: `expected ${what} as a calendar date YYYY-MM-DD` });
const optionalDay = (what: string) =>
  z
    .string()
    .trim()
    .refine((s) => s === "" || asDate(s) !== null, { error: `expected ${what} as a calendar date YYYY-MM-DD, or an empty cell` })
    .transform((s) => (s === "" ? undefined : s));

export const CensusRowSchema = z
  .object({
    employee_id: text("the employee's identifier (the same on each of their dependents' rows)"),
    relationship: z
      .string()
      .trim()
      .transform((s) => RELATIONSHIP_ALIASES[s.toLowerCase()])
      .refine((r) => r !== undefined, { error: "expected self (or employee), spouse or child" })
      .transform((r) => r as Relationship),
    first_name: text("a first name"),
    last_name: text("a last name"),
    date_of_birth: day("the date of birth"),
    ssn: z
      .string()
      .trim()
      .refine((s) => /^\d{3}-?\d{2}-?\d{4}$/.test(s), { error: "expected an SSN of 9 digits (ddd-dd-dddd or ddddddddd); the value is not shown" })
      .transform((s) => s.replace(/\D/g, "")),
    gender: optional,
    email: optional.refine((s) => s === undefined || z.email().safeParse(s).success, { error: "expected an email address, or an empty cell" }),
    phone: optional,
    address_line1: optional,
    address_line2: optional,
    city: optional,
    state: optional,
    zip: optional.refine((s) => s === undefined || /^\d{5}(-\d{4})?$/.test(s), { error: "expected a ZIP code (12345 or 12345-6789), or an empty cell" }),
    plan_id: optional,
    coverage_start: optionalDay("the coverage start"),
    coverage_end: optionalDay("the coverage end"),
  })
  .superRefine((r, ctx) => {
    if (r.coverage_start && r.coverage_end && r.coverage_end < r.coverage_start)
      ctx.addIssue({ code: "custom", path: ["coverage_end"], message: "expected a coverage end on or after the coverage start" });
  });

/** A row as read; `ssn` holds digits only and lives in memory only (it is sent, never written). */
export type CensusRowFields = z.output<typeof CensusRowSchema>;

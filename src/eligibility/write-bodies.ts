/**
 * The request bodies a census plan sends, from the file's rows, in the shapes of the client's write
 * schemas. They hold the plain SSN and the person's cells the service needs: they go to the client
 * and nowhere else (the result file records them through {@link shownBody}, which describes them).
 */
import type { AddDependentBody, EnrolleeInput, SubscriberEntry } from "../../schemas/writes.js";
import { maskPii } from "../store/pii/pii.js";
import { describedValue } from "./cell-text.js";
import type { NewDependent, NewSubscriber } from "./census-plan.js";
import type { CensusRow } from "./read-census.js";

/** A person as an enrollment request carries them. */
export function enrollee(row: CensusRow): EnrolleeInput {
  const address = { line1: row.address_line1, line2: row.address_line2, city: row.city, state: row.state, zip: row.zip };
  const given = Object.fromEntries(Object.entries(address).filter(([, v]) => v !== undefined));
  return {
    firstName: row.first_name,
    lastName: row.last_name,
    dateOfBirth: row.date_of_birth,
    ssn: `${row.ssn.slice(0, 3)}-${row.ssn.slice(3, 5)}-${row.ssn.slice(5)}`,
    memberType: row.relationship === "self" ? "employee" : "dependent",
    relationship: row.relationship,
    ...(row.gender !== undefined ? { gender: row.gender } : {}),
    ...(row.email !== undefined ? { email: row.email } : {}),
    ...(row.phone !== undefined ? { phone: row.phone } : {}),
    ...(Object.keys(given).length > 0 ? { address: given } : {}),
  };
}

/** One add-subscriber entry: the subscriber with the new spouse and children of the same employee. */
export function subscriberEntry(s: NewSubscriber, rowAt: (line: number) => CensusRow): SubscriberEntry {
  const deps = s.dependents.map(rowAt);
  const spouse = deps.find((d) => d.relationship === "spouse");
  const children = deps.filter((d) => d.relationship === "child");
  return {
    plan: s.plan,
    self: enrollee(rowAt(s.line)),
    ...(spouse ? { spouse: enrollee(spouse) } : {}),
    ...(children.length > 0 ? { children: children.map(enrollee) } : {}),
  };
}

export function dependentBody(d: NewDependent, rowAt: (line: number) => CensusRow): AddDependentBody {
  return { plan: d.plan, dependent: enrollee(rowAt(d.line)) };
}

/**
 * The keys of a body whose values the result file shows: the service's ids, the group's plan (from
 * the group listing), fixed words of the layout, the SSN's last four digits and token, and the
 * coverage end date a termination sets (shown in the plan too). Every other value came from a
 * person's cell (a name, a date of birth, an address, an e-mail, a phone, a gender): described by
 * the one cell rule (cell-text.ts), never quoted.
 */
const SHOWN_KEYS: ReadonlySet<string> = new Set(["plan", "memberType", "relationship", "memberId", "coverageId", "terminationDate", "ssn_last4", "ssn_token"]);

/**
 * A body as the result file may show it: every SSN field replaced by its last four digits and
 * token, by the one rule the snapshot masks with, and every cell of a person by its shape.
 *
 * @example shownBody({ self: { firstName: "Nadia", ssn: "123-45-6789" } }, key) // { self: { firstName: "(5 characters, letters only)", ssn_last4: "6789", ssn_token: "…" } }
 */
export function shownBody(body: unknown, key: Buffer): unknown {
  return described(maskPii(body, key), undefined);
}

function described(value: unknown, key: string | undefined): unknown {
  if (Array.isArray(value)) return value.map((v) => described(v, key));
  if (value !== null && typeof value === "object") return Object.fromEntries(Object.entries(value).map(([k, v]) => [k, described(v, k)]));
  return typeof value === "string" && !(key !== undefined && SHOWN_KEYS.has(key)) ? describedValue(value) : value;
}

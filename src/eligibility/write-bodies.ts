/**
 * The request bodies a census plan sends, from the file's rows, in the shapes of the client's write
 * schemas. They hold the plain SSN the service needs: they go to the client and nowhere else (the
 * result file records them through {@link shownBody}).
 */
import type { AddDependentBody, EnrolleeInput, SubscriberEntry } from "../../schemas/writes.js";
import { maskPii } from "../store/pii.js";
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
 * A body as the result file may show it: every SSN field replaced by its last four digits and
 * token, by the one rule the snapshot masks with.
 *
 * @example shownBody({ self: { ssn: "123-45-6789" } }, key) // { self: { ssn_last4: "6789", ssn_token: "…" } }
 */
export function shownBody(body: unknown, key: Buffer): unknown {
  return maskPii(body, key);
}

/**
 * What `groups create` shows of its file, the one list its messages use (docs/groups-create.md says
 * the same). The nine group fields are the employer's and the service's, not a person's: a message
 * that needs one shows it as given. Everything else is a person's, or unknown: the `members` and
 * `subscribers` (names, dates of birth, SSNs, addresses, e-mails, phones, the caller's memberId) are
 * never quoted; a problem with one names its key path and, for a text, its shape (cell-text.ts).
 */
import type { CreateGroupBody } from "../../schemas/writes.js";
import { describedValue } from "../eligibility/cell-text.js";

/** The group fields a message shows as given, each with why it is no person's data. */
export const SHOWN_GROUP_FIELDS = {
  groupId: "the group number, the employer's",
  adminEmail: "the group administrator's contact address, as the service's GROUP_TAKEN refusal names it (not PHI)",
  sponsorName: "the employer's name",
  ein: "the employer's tax id (not PHI; an SSN-shaped text is masked in every error all the same)",
  planDesignId: "a reference to the service's plan designs",
  benefitBundleId: "a reference to the service's benefit bundles",
  vendorId: "a reference to the service's vendors",
  effectiveDate: "the policy's start",
  terminationDate: "the policy's end",
} as const satisfies Record<keyof CreateGroupBody, string>;

const isShown = (key: PropertyKey): key is keyof typeof SHOWN_GROUP_FIELDS => Object.hasOwn(SHOWN_GROUP_FIELDS, key);

/**
 * What a problem with the value at `path` adds after its message: `, got "x"` for a group field, its
 * shape for anyone else's text, nothing for what is not a text (the message names its key and what
 * is wrong).
 *
 * @example
 * shownFileValue(["adminEmail"], "hr@acme")      // ', got "hr@acme"'
 * shownFileValue(["members", 0, "ssn"], "98-765") // " (6 characters, digits, other characters)"
 */
export function shownFileValue(path: readonly PropertyKey[], value: unknown): string {
  if (typeof value !== "string") return "";
  return path.length === 1 && isShown(path[0]!) ? `, got ${JSON.stringify(value)}` : ` ${describedValue(value)}`;
}

/**
 * A field of the group body as a message shows it: quoted when it is one of
 * {@link SHOWN_GROUP_FIELDS}, otherwise by its shape.
 *
 * @example shownGroupField(body, "groupId") // '"G-2027-ACME"'
 */
export function shownGroupField(body: CreateGroupBody, field: string): string {
  const value = body[field];
  if (isShown(field)) return JSON.stringify(value);
  return typeof value === "string" ? describedValue(value) : "(not a text)";
}

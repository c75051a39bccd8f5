/**
 * Which of the spec's three create-group refusals a 400 is: adminEmail or group number taken, an
 * EIN whose policy dates overlap, a reference to no existing plan design, bundle or vendor. The
 * spec gives the conditions, not the words, so the field is read from the `errors` array when it
 * names one, else from the message; a 400 that is none of them (a validation failure) is left as is.
 */
import type { CreateGroupBody } from "../../schemas/writes.js";
import { ApiError, EinOverlapError, GroupTakenError, UnknownReferenceError, type ApiErrorFields } from "../errors.js";
import { shownGroupField } from "../onboarding/shown-fields.js";

const TAKEN = /already|taken|in use|exists|duplicate|unique|not available/i;
const OVERLAP = /overlap/i;
const MISSING = /not found|no such|unknown|does not (?:exist|reference)|doesn't exist|not exist|invalid reference|not reference|nonexistent|non-existent|references? no/i;

/** How each field may be named in a message, most specific first. */
const FIELD_WORDS: readonly (readonly [keyof CreateGroupBody, RegExp])[] = [
  ["adminEmail", /admin\s*_?email/i],
  ["groupId", /group\s*_?(?:id|number)\b|\bgroup\s*no\b/i],
  ["planDesignId", /plan\s*_?design/i],
  ["benefitBundleId", /benefit\s*_?bundle|\bbundle/i],
  ["vendorId", /vendor/i],
  ["ein", /\bein\b/i],
];

const REFERENCES = new Set<string>(["planDesignId", "benefitBundleId", "vendorId"]);

function fieldsNamed(text: string): (keyof CreateGroupBody)[] {
  return FIELD_WORDS.filter(([, re]) => re.test(text)).map(([f]) => f);
}

/**
 * The typed error for a documented create-group 400, or `err` unchanged.
 *
 * @example
 * groupRejection(apiError("adminEmail is already used by another group"), body) // GroupTakenError, field "adminEmail"
 */
export function groupRejection(err: unknown, body: CreateGroupBody): unknown {
  if (!(err instanceof ApiError) || err.status !== 400 || err.constructor !== ApiError) return err;
  const fields: ApiErrorFields = { status: err.status, method: err.method, path: err.path, serverMessage: err.serverMessage, timestamp: err.timestamp, issues: err.issues };
  // An issue that names a field and says what is wrong with it is the clearest source; the message next.
  const sources = [...err.issues.map((i) => ({ named: fieldsNamed(String(i.path[0] ?? "")), text: `${i.message} ${i.code ?? ""}` })), { named: fieldsNamed(err.serverMessage ?? ""), text: err.serverMessage ?? "" }];
  for (const { named, text } of sources) {
    if (named.includes("ein") && OVERLAP.test(text))
      return new EinOverlapError(fields, "ein", `ein: a sponsor with this EIN already has a policy overlapping ${body.effectiveDate} to ${body.terminationDate}; a renewal starts after that policy ends, or check the EIN`);
    const reference = named.find((f) => REFERENCES.has(f));
    if (reference && MISSING.test(text))
      return new UnknownReferenceError(fields, reference, `${reference} ${shownGroupField(body, reference)} does not reference an existing record; take it from the plan designs (GET /v2/designs)`);
    const taken = named.find((f) => f === "adminEmail" || f === "groupId");
    if (taken && TAKEN.test(text)) {
      const what = taken === "groupId" ? "groupId (the group number)" : "adminEmail";
      return new GroupTakenError(fields, taken, `${what} ${shownGroupField(body, taken)} is already used by another group; choose another`);
    }
  }
  return err;
}

/**
 * The file `groups create` reads: the nine fields the spec lists for a new group, optionally the
 * `members` to enroll at group start (a flat list, as initial-enrollment takes them, each with the
 * caller's memberId), and optionally `subscribers` for add-subscriber (households with spouse and
 * children). Every problem is reported at once, naming the file and the key; nothing is sent while
 * one remains. The people in it carry SSNs, so no problem ever quotes a person's value: what is
 * shown of each field is shown-fields.ts's one list.
 */
import { z } from "zod";
import { CreateGroupBody, EnrolleeInput } from "../../schemas/writes.js";
import { dotted } from "../config/problems.js";
import { readConfigFile } from "../config/read-file.js";
import { isCalendarDay } from "../calendar-day.js";
import { InputFileError } from "../input-errors.js";
import type { MemberInput } from "./initial-enrollment.js";
import { readYamlFile } from "./read-yaml.js";
import { shownFileValue, shownGroupField } from "./shown-fields.js";

const Household = z.strictObject({
  self: EnrolleeInput,
  spouse: EnrolleeInput.optional(),
  children: z.array(EnrolleeInput).optional(),
  tags: z.array(z.string()).optional(),
});
export type Household = z.infer<typeof Household>;

const Member = EnrolleeInput.extend({ memberId: z.string().min(1) });

const GroupFile = CreateGroupBody.extend({ members: z.array(Member).optional(), subscribers: z.array(Household).optional() });

export interface GroupFileContent {
  /** The body of `POST /v2/groups`: the file's group fields, `members` and `subscribers` left out. */
  readonly group: CreateGroupBody;
  /** For initial-enrollment (spec rule 2), in the file's order: dependents follow their employee. */
  readonly members: readonly MemberInput[];
  readonly subscribers: readonly Household[];
}

/** The date fields a person or a group carries: checked as calendar dates, not only as a pattern. */
const DATE_KEYS = new Set(["effectiveDate", "terminationDate", "dateOfBirth"]);

/**
 * Read and check a group file: JSON, or YAML when its name ends in `.yaml` or `.yml` (read-yaml.ts).
 *
 * @example
 * readGroupFile("acme-2026.json", "acme-2026.json") // { group: {...}, members: [...], subscribers: [] }
 */
export function readGroupFile(file: string, display: string): GroupFileContent {
  const read = /\.ya?ml$/i.test(file) ? readYamlFile(file, display) : readConfigFile(file, { required: true, display });
  if (read.kind !== "ok") throw new InputFileError([read.kind === "problem" ? read.problem : `${display}: no such file`]);
  const parsed = GroupFile.safeParse(read.data);
  // YAML reads an unquoted 123456789 or 01234 as a number: say how to keep it text.
  const yamlHint = (m: string) => (/\.ya?ml$/i.test(file) && /received number/.test(m) ? "; in YAML, put it in quotes" : "");
  const problems = parsed.success ? [] : parsed.error.issues.map((i) => `${display}: ${dotted(i.path)}: ${i.message}${yamlHint(i.message)}${shown(read.data, i.path)}`);
  problems.push(...badDays(read.data, [], display), ...repeatedIds(read.data.members, display));
  const g = parsed.data;
  if (g && g.effectiveDate > g.terminationDate) problems.push(`${display}: terminationDate: ${shownGroupField(g, "terminationDate")} is before effectiveDate ${shownGroupField(g, "effectiveDate")}`);
  if (problems.length > 0 || !parsed.success) throw new InputFileError(problems);
  const { members = [], subscribers = [], ...group } = parsed.data;
  return { group, members, subscribers };
}

/** A memberId given twice: the service would refuse the second, and the file means two people. */
function repeatedIds(members: unknown, display: string): string[] {
  const first = new Map<string, number>();
  return (Array.isArray(members) ? members : []).flatMap((m: unknown, i) => {
    const id = (m as { memberId?: unknown } | null)?.memberId;
    if (typeof id !== "string" || id === "") return [];
    const at = first.get(id);
    if (at === undefined) first.set(id, i);
    return at === undefined ? [] : [`${display}: members[${i}].memberId: the same memberId as members[${at}]; each member needs their own`];
  });
}

/** `, got "x"` for a group field, ` (6 characters, digits only)` for a person's text (shown-fields.ts). */
function shown(data: Record<string, unknown>, path: readonly PropertyKey[]): string {
  let v: unknown = data;
  for (const p of path) v = v !== null && typeof v === "object" ? (v as Record<PropertyKey, unknown>)[p] : undefined;
  return shownFileValue(path, v);
}

/** Every date field, at any depth, that has the pattern but is no calendar day (2026-02-30). */
function badDays(value: unknown, path: (string | number)[], display: string): string[] {
  if (Array.isArray(value)) return value.flatMap((v, i) => badDays(v, [...path, i], display));
  if (value === null || typeof value !== "object") return [];
  return Object.entries(value as Record<string, unknown>).flatMap(([k, v]) =>
    DATE_KEYS.has(k) && typeof v === "string" && !isCalendarDay(v) ? [`${display}: ${dotted([...path, k])}: not a calendar date`] : badDays(v, [...path, k], display),
  );
}

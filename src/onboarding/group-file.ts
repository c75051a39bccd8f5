/**
 * The file `groups create` reads: the nine fields the spec lists for a new group, and optionally the
 * subscribers to enroll in it (each with spouse and children, as add-subscriber takes them). Every
 * problem is reported at once, naming the file and the key; nothing is sent while one remains. The
 * people in it carry SSNs, so no problem ever quotes a value under `subscribers`.
 */
import { z } from "zod";
import { CreateGroupBody, EnrolleeInput } from "../../schemas/writes.js";
import { dotted } from "../config/problems.js";
import { readConfigFile } from "../config/read-file.js";
import { isCalendarDay } from "../calendar-day.js";
import { ConfigError } from "../errors.js";
import { readYamlFile } from "./read-yaml.js";

const Household = z.strictObject({
  self: EnrolleeInput,
  spouse: EnrolleeInput.optional(),
  children: z.array(EnrolleeInput).optional(),
  tags: z.array(z.string()).optional(),
});
export type Household = z.infer<typeof Household>;

const GroupFile = CreateGroupBody.extend({ subscribers: z.array(Household).optional() });

export interface GroupFileContent {
  /** The body of `POST /v2/groups`: the file's group fields, `subscribers` left out. */
  readonly group: CreateGroupBody;
  readonly subscribers: readonly Household[];
}

/** The date fields a person or a group carries: checked as calendar dates, not only as a pattern. */
const DATE_KEYS = new Set(["effectiveDate", "terminationDate", "dateOfBirth"]);

/**
 * Read and check a group file: JSON, or YAML when its name ends in `.yaml` or `.yml` (read-yaml.ts).
 *
 * @example
 * readGroupFile("acme-2026.json", "acme-2026.json") // { group: {...}, subscribers: [...] }
 */
export function readGroupFile(file: string, display: string): GroupFileContent {
  const read = /\.ya?ml$/i.test(file) ? readYamlFile(file, display) : readConfigFile(file, { required: true, display });
  if (read.kind !== "ok") throw new ConfigError([read.kind === "problem" ? read.problem : `${display}: no such file`]);
  const parsed = GroupFile.safeParse(read.data);
  // YAML reads an unquoted 123456789 or 01234 as a number: say how to keep it text.
  const yamlHint = (m: string) => (/\.ya?ml$/i.test(file) && /received number/.test(m) ? "; in YAML, put it in quotes" : "");
  const problems = parsed.success ? [] : parsed.error.issues.map((i) => `${display}: ${dotted(i.path)}: ${i.message}${yamlHint(i.message)}${shown(read.data, i.path)}`);
  problems.push(...badDays(read.data, [], display));
  const g = parsed.data;
  if (g && g.effectiveDate > g.terminationDate) problems.push(`${display}: terminationDate: ${g.terminationDate} is before effectiveDate ${g.effectiveDate}`);
  if (problems.length > 0 || !parsed.success) throw new ConfigError(problems);
  const { subscribers = [], ...group } = parsed.data;
  return { group, subscribers };
}

/** `, got "x"` for a group field; nothing under `subscribers` (a person's data is never quoted). */
function shown(data: Record<string, unknown>, path: readonly PropertyKey[]): string {
  if (path.length !== 1 || path[0] === "subscribers") return "";
  const v = data[String(path[0])];
  return typeof v === "string" ? `, got ${JSON.stringify(v)}` : "";
}

/** Every date field, at any depth, that has the pattern but is no calendar day (2026-02-30). */
function badDays(value: unknown, path: (string | number)[], display: string): string[] {
  if (Array.isArray(value)) return value.flatMap((v, i) => badDays(v, [...path, i], display));
  if (value === null || typeof value !== "object") return [];
  return Object.entries(value as Record<string, unknown>).flatMap(([k, v]) =>
    DATE_KEYS.has(k) && typeof v === "string" && !isCalendarDay(v) ? [`${display}: ${dotted([...path, k])}: not a calendar date`] : badDays(v, [...path, k], display),
  );
}

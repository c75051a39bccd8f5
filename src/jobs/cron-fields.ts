/**
 * Which cron expressions a job may have. node-cron 4.6 accepts more than it reads as cron does:
 * `*\/61` in the minute field passes its validation and fires at minute 0 only (it expands `*` to
 * 0-59 and steps past the end), a reversed range `22-2` wraps around where cron refuses it, and a
 * day of the month together with a weekday must both hold where cron takes either. So an
 * expression is read here first, by cron's own field ranges, and only then given to node-cron,
 * whose own refusal (an impossible date such as `0 0 31 2 *`) still counts: nothing either of the
 * two would refuse or read otherwise is accepted.
 */
import { validateDetailed } from "node-cron";

interface Field {
  readonly name: string;
  readonly min: number;
  readonly max: number;
  /** Names cron accepts for the values, from `min` on (months from 1, weekdays from 0). */
  readonly names?: readonly string[];
}

const MONTHS = ["jan", "feb", "mar", "apr", "may", "jun", "jul", "aug", "sep", "oct", "nov", "dec"];
const WEEKDAYS = ["sun", "mon", "tue", "wed", "thu", "fri", "sat"];

/** minute hour day month weekday, with cron's ranges (weekday 7 is Sunday, as 0). */
const FIELDS: readonly Field[] = [
  { name: "minute", min: 0, max: 59 },
  { name: "hour", min: 0, max: 23 },
  { name: "day", min: 1, max: 31 },
  { name: "month", min: 1, max: 12, names: MONTHS },
  { name: "weekday", min: 0, max: 7, names: WEEKDAYS },
];

/** The shorthands cron and node-cron read alike. */
const NICKNAMES: Readonly<Record<string, string>> = {
  "@yearly": "0 0 1 1 *",
  "@annually": "0 0 1 1 *",
  "@monthly": "0 0 1 * *",
  "@weekly": "0 0 * * 0",
  "@daily": "0 0 * * *",
  "@midnight": "0 0 * * *",
  "@hourly": "0 * * * *",
};

export const CRON_FORMAT = "minute hour day month weekday";

/**
 * What is wrong with a cron expression, or undefined when cron and node-cron read it alike.
 *
 * @example
 * cronProblem("*\/61 * * * *") // 'the minute field "*\/61" steps by 61; a minute step runs from 1 to 59'
 * cronProblem("0 2 * * *") // undefined
 */
export function cronProblem(expression: string): string | undefined {
  const text = NICKNAMES[expression.trim().toLowerCase()] ?? expression.trim();
  const parts = text.split(/\s+/);
  if (parts.length !== FIELDS.length) {
    return `expected a cron expression (${CRON_FORMAT}), got ${JSON.stringify(expression)}`;
  }
  for (let i = 0; i < FIELDS.length; i++) {
    const problem = fieldProblem(parts[i]!, FIELDS[i]!);
    if (problem) return problem;
  }
  // Cron takes either a day or a weekday only when neither field starts with *; node-cron wants both.
  if (!parts[2]!.startsWith("*") && !parts[4]!.startsWith("*")) {
    return `${JSON.stringify(expression)} sets both the day (${parts[2]}) and the weekday (${parts[4]}): cron runs on either, the scheduler only on both; set one of them to *`;
  }
  const ours = validateDetailed(text);
  if (!ours.valid) return `${JSON.stringify(expression)}: ${ours.errors.map((e) => e.message.replace("a invalid", "an invalid")).join("; ")}`;
  return undefined;
}

function fieldProblem(text: string, f: Field): string | undefined {
  const say = (why: string) => `the ${f.name} field ${JSON.stringify(text)} ${why}`;
  for (const item of text.split(",")) {
    const m = /^(\*|([a-z0-9]+)(?:-([a-z0-9]+))?)(?:\/([0-9]+))?$/i.exec(item);
    if (!m) return say(`is not cron: use *, N, N-M, a list N,M or a step */S or N-M/S`);
    const [, , from, to, step] = m;
    if (from !== undefined) {
      const a = valueOf(from, f);
      const b = to !== undefined ? valueOf(to, f) : a;
      if (a === undefined || b === undefined) {
        const names = f.names ? ` (or ${f.names[0]}-${f.names[f.names.length - 1]})` : "";
        return say(`has ${JSON.stringify(a === undefined ? from : to)}; a ${f.name} runs from ${f.min} to ${f.max}${names}`);
      }
      if (a > b) return say(`runs backwards (${from}-${to}); write it as two ranges, e.g. ${from}-${f.max},${f.min}-${to}`);
      if (step !== undefined && to === undefined) return say(`has a step without a range; write ${from}-${f.max}/${step}`);
    }
    if (step !== undefined) {
      const s = Number(step);
      const most = f.max - f.min;
      if (s < 1 || s > most) return say(`steps by ${s}; a ${f.name} step runs from 1 to ${most}`);
    }
  }
  return undefined;
}

function valueOf(token: string, f: Field): number | undefined {
  if (/^[0-9]+$/.test(token)) {
    const n = Number(token);
    return n >= f.min && n <= f.max ? n : undefined;
  }
  const i = f.names?.indexOf(token.toLowerCase()) ?? -1;
  return i < 0 ? undefined : f.min === 1 ? i + 1 : i;
}
